/**
 * site.yaml `gridOperator:` (src/config/schema-grid-operator.ts): its mistakes named with their
 * lines, its files read at load like the other TLS files, and check-config printing what the
 * distributor asks for at enrolment (LFDI, SFDI, NMI), from certificates openssl makes as IEEE
 * 2030.5 issues them (test/support/csip-pki.ts).
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkConfigCommand } from '../../src/cli/check-config.js';
import { identityOfPem } from '../../src/gridop/identity.js';
import { loadConfig, parseConfig } from '../../src/profiles/site-config.js';
import { type CsipPki, HAVE_OPENSSL, makeCsipPki } from '../support/csip-pki.js';
import { captureLines } from '../support/output.js';
import { expectSingleError, text, withAppended } from './fixtures.js';

const GOOD = [
  /* 16 */ 'gridOperator:',
  /* 17 */ '  protocol: csip-aus',
  /* 18 */ '  discoveryUrl: https://csip.example.com.au/dcap',
  /* 19 */ '  certificate: device.pem',
  /* 20 */ '  key: device.key',
  /* 21 */ '  ca: serca.pem',
  /* 22 */ "  nmi: '4102345678'",
];
const edited = (line: number, value: string | null) => {
  const out = [...GOOD];
  if (value === null) out.splice(line - 16, 1);
  else out[line - 16] = value;
  return text(withAppended(out));
};

describe('gridOperator: in site.yaml', () => {
  it('is optional, and takes pollSeconds 60 by default', () => {
    const r = parseConfig(text(withAppended(GOOD)), 'site.yaml', '/etc/sitegw');
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.config.gridOperator).toMatchObject({ protocol: 'csip-aus', nmi: '4102345678', pollSeconds: 60 });
    expect(r.config.gridOperator!.certificate).toBe('/etc/sitegw/device.pem');
    const none = parseConfig(text(withAppended([])), 'site.yaml', '/etc/sitegw');
    expect(none.ok && none.config.gridOperator).toBeUndefined();
  });

  it('names each mistake with its line and a hint', () => {
    const at = (line: number, value: string | null) => parseConfig(edited(line, value), 'site.yaml', '/etc');
    expectSingleError(at(17, '  protocol: openadr'), {
      path: 'gridOperator.protocol',
      line: 17,
      message: /csip-aus/,
      hint: /write csip-aus/,
    });
    expectSingleError(at(18, '  discoveryUrl: http://csip.example.com.au/dcap'), {
      path: 'gridOperator.discoveryUrl',
      line: 18,
      message: /./,
      hint: /https:\/\//,
    });
    expectSingleError(at(22, "  nmi: '41023O5678'"), {
      path: 'gridOperator.nmi',
      line: 22,
      message: /./,
      hint: /10-character NMI/,
    });
    expectSingleError(parseConfig(text(withAppended([...GOOD, '  pollSeconds: 1'])), 'site.yaml', '/etc'), {
      path: 'gridOperator.pollSeconds',
      line: 23,
      message: /./,
      hint: /between 5 and 3600/,
    });
    const missing = at(20, null);
    expect(missing.ok).toBe(false);
    expect(!missing.ok && missing.errors[0]?.message).toMatch(/key/);
  });
});

describe.skipIf(!HAVE_OPENSSL)('gridOperator files and check-config', () => {
  let pki: CsipPki;
  let n = 0;
  beforeAll(() => {
    pki = makeCsipPki();
  });
  afterAll(() => pki?.remove());

  function site(files: Record<string, string>, lines = GOOD): string {
    const dir = join(pki.dir, `site-${n++}`);
    mkdirSync(dir);
    for (const [name, from] of Object.entries(files)) copyFileSync(from, join(dir, name));
    writeFileSync(join(dir, 'site.yaml'), text(withAppended(lines)));
    return join(dir, 'site.yaml');
  }
  const good = () => ({ 'device.pem': pki.device.cert, 'device.key': pki.device.key, 'serca.pem': pki.serca });

  it('prints the LFDI and SFDI of a device certificate with an empty subject and no expiry', async () => {
    const io = captureLines();
    expect(await checkConfigCommand(site(good()), io)).toBe(0);
    const id = identityOfPem(readFileSync(pki.device.cert));
    expect(io.stdout).toContain('  grid operator: csip-aus at https://csip.example.com.au/dcap, NMI 4102345678');
    expect(io.stdout).toContain(`  LFDI ${id.lfdi}`);
    expect(io.stdout).toContain(`  SFDI ${id.sfdi}`);
    expect(io.stdout.join('\n')).not.toMatch(/does not start/);
    expect(io.stdout.join('\n')).not.toMatch(/warning/);
  });

  it('warns of a key that is not EC P-256', async () => {
    const io = captureLines();
    const file = site({ 'device.pem': pki.rsa.cert, 'device.key': pki.rsa.key, 'serca.pem': pki.serca });
    expect(await checkConfigCommand(file, io)).toBe(0);
    expect(io.stdout.join('\n')).toMatch(/warning: the key is not EC P-256/);
  });

  it('names a missing certificate and a key of another certificate with their lines', async () => {
    expectSingleError(await loadConfig(site({ 'device.key': pki.device.key, 'serca.pem': pki.serca })), {
      path: 'gridOperator.certificate',
      line: 19,
      message: /file not found/,
      hint: /relative path is taken from the folder of site.yaml/,
    });
    const wrongKey = site({ 'device.pem': pki.device.cert, 'device.key': pki.other.key, 'serca.pem': pki.serca });
    expectSingleError(await loadConfig(wrongKey), {
      path: 'gridOperator.key',
      line: 20,
      message: /does not belong to the certificate in gridOperator\.certificate/,
      hint: /made together with this certificate/,
    });
  });
});
