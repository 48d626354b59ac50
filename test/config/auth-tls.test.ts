/** site.yaml keys of the token service and TLS: defaults, paths, and the mistakes an installer makes. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/profiles/site-config.js';
import { expectSingleError, MINIMAL, text, withAppended } from './fixtures.js';

const parse = (lines: readonly string[], baseDir = '/etc/sitegw') => parseConfig(text(lines), 'site.yaml', baseDir);

describe('http.tls, http.insecure and auth in site.yaml', () => {
  it('takes relative certificate paths from the folder of site.yaml and keeps set values', () => {
    const r = parse(
      withAppended([
        'http:',
        '  host: 0.0.0.0',
        '  tls:',
        '    cert: tls/cert.pem',
        '    key: /srv/key.pem',
        'auth:',
        '  accessTokenSeconds: 600',
        '  maxFailedAttempts: 5',
      ]),
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.config.http.tls).toEqual({ mode: 'auto', cert: '/etc/sitegw/tls/cert.pem', key: '/srv/key.pem' });
    expect(r.config.auth).toEqual({
      accessTokenSeconds: 600,
      refreshTokenDays: 30,
      codeSeconds: 60,
      maxFailedAttempts: 5,
      failureWindowSeconds: 300,
    });
  });

  it('a certificate without its key names the missing key at the line of the given one', () => {
    expectSingleError(parse(withAppended(['http:', '  tls:', '    cert: /etc/sitegw/cert.pem'])), {
      path: 'http.tls.key',
      line: 18,
      message: /'cert' is set but 'key' is not/,
      hint: /give both cert and key, or neither/,
    });
  });

  it('HTTPS everywhere and plain HTTP at once is refused', () => {
    expectSingleError(parse(withAppended(['http:', '  insecure: true', '  tls:', '    mode: always'])), {
      path: 'http.insecure',
      line: 17,
      message: /insecure: true asks for plain HTTP while tls.mode: always asks for HTTPS/,
      hint: /remove one of the two/,
    });
  });

  it('wrong values say what is allowed', () => {
    expectSingleError(parse(withAppended(['http:', '  tls:', '    mode: on'])), {
      path: 'http.tls.mode',
      line: 18,
      message: /'on'/,
      hint: /auto|always/,
    });
    expectSingleError(parse(withAppended(['http:', '  insecure: yes please'])), {
      path: 'http.insecure',
      line: 17,
      message: /true or false/,
      hint: /leave it out to get HTTPS/,
    });
    expectSingleError(parse(withAppended(['auth:', '  accessTokenSeconds: 10'])), {
      path: 'auth.accessTokenSeconds',
      line: 17,
      message: /at least 60/,
      hint: /usually 3600/,
    });
    expectSingleError(parse(withAppended(['auth:', '  tokenLifetime: 3600'])), {
      path: 'auth.tokenLifetime',
      line: 17,
      message: /unknown key/,
      hint: /accessTokenSeconds/,
    });
  });

  it('the minimal file needs none of it', () => {
    const r = parse([...MINIMAL]);
    expect(r.ok && r.config.http.tls.mode).toBe('auto');
  });
});
