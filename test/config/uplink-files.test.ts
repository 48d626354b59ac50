/**
 * uplink.tls files are read when site.yaml is loaded (src/config/tls-files.ts): each mistake
 * is named with its line, with real files made by openssl (test/support/pki.ts).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkConfigCommand } from '../../src/cli/check-config.js';
import { loadConfig } from '../../src/profiles/site-config.js';
import { sitegwCommand } from '../support/cli.js';
import { captureLines } from '../support/output.js';
import { HAVE_OPENSSL, makePki, type Pki } from '../support/pki.js';
import { errorsOf, expectSingleError, MINIMAL, text, withAppended } from './fixtures.js';

const ROOT = new URL('../../', import.meta.url).pathname;
if (!HAVE_OPENSSL)
  console.warn(
    '\n*** test/config/uplink-files.test.ts: openssl is not installed: these tests are SKIPPED (.ci/run installs it) ***\n',
  );

describe.skipIf(!HAVE_OPENSSL)('uplink.tls files at config load', () => {
  let pki: Pki;
  let n = 0;
  beforeAll(() => {
    pki = makePki();
  });
  afterAll(() => pki?.remove());

  /** A folder holding site.yaml with `uplink.tls` = `tls` (lines 19, 20, 21) and `files` copied in. */
  function site(tls: { ca?: string; cert?: string; key?: string }, files: Record<string, string> = {}): string {
    const dir = join(pki.dir, `site-${n++}`);
    mkdirSync(dir);
    for (const [name, from] of Object.entries(files)) copyFileSync(from, join(dir, name));
    const lines = [
      'uplink:',
      '  url: mqtts://broker.example.com:8883',
      '  tls:',
      ...Object.entries(tls).map(([k, v]) => `    ${k}: ${v}`),
    ];
    writeFileSync(join(dir, 'site.yaml'), text(withAppended(lines)));
    return join(dir, 'site.yaml');
  }
  const good = () => ({ 'ca.pem': pki.ca, 'client.pem': pki.client.cert, 'client.key': pki.client.key });
  const ALL = { ca: 'ca.pem', cert: 'client.pem', key: 'client.key' };

  it('accepts readable PEM files, relative to site.yaml, with a key that belongs to the certificate', async () => {
    const file = site(ALL, good());
    const r = await loadConfig(file);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.config.uplink!.tls.key).toBe(join(file, '..', 'client.key'));
  });

  it('names a missing file and a folder with their lines', async () => {
    const missing = site(ALL, { 'client.pem': pki.client.cert, 'client.key': pki.client.key });
    expectSingleError(await loadConfig(missing), {
      path: 'uplink.tls.ca',
      line: 19,
      column: 5,
      message: new RegExp(`^file not found \\(looked at ${join(missing, '..', 'ca.pem')}\\)$`),
      hint: /relative path is taken from the folder of site.yaml/,
    });

    const folder = site({ ...ALL, cert: '.' }, good());
    expectSingleError(await loadConfig(folder), {
      path: 'uplink.tls.cert',
      line: 20,
      message: /is a folder, not a file/,
      hint: /path of the PEM file/,
    });
  });

  it('names a file the sitegw user may not read, through check-config', () => {
    const file = site(ALL, good());
    chmodSync(join(file, '..', 'client.key'), 0o000);
    // root reads any file: as root the check runs as nobody, who may read all but the key
    chmodSync(pki.dir, 0o755);
    const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    const r = spawnSync(...sitegwCommand(['check-config', file]), {
      cwd: ROOT,
      encoding: 'utf8',
      ...asNobody,
    });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      `${file}:21:5 uplink.tls.key: no permission to read ${join(file, '..', 'client.key')} — make the file readable by the user sitegw runs as`,
    );
  });

  it('names a DER certificate, a certificate given as the key and an encrypted key', async () => {
    const der = join(pki.dir, `ca-${n}.der`);
    execFileSync('openssl', ['x509', '-in', pki.ca, '-outform', 'der', '-out', der]);
    expectSingleError(await loadConfig(site(ALL, { ...good(), 'ca.pem': der })), {
      path: 'uplink.tls.ca',
      line: 19,
      message: /holds no PEM certificate/,
      hint: /openssl x509 -inform der/,
    });

    expectSingleError(await loadConfig(site({ ...ALL, key: 'client.pem' }, good())), {
      path: 'uplink.tls.key',
      line: 21,
      message: /holds no PEM private key/,
      hint: /PEM form/,
    });

    const encrypted = join(pki.dir, `enc-${n}.key`);
    execFileSync('openssl', ['pkey', '-in', pki.client.key, '-aes256', '-passout', 'pass:secret', '-out', encrypted]);
    expectSingleError(await loadConfig(site(ALL, { ...good(), 'client.key': encrypted })), {
      path: 'uplink.tls.key',
      line: 21,
      message: /protected by a passphrase/,
      hint: /openssl pkey -in FILE -out FILE.plain/,
    });
  });

  it("names a key that is not the client certificate's", async () => {
    expectSingleError(await loadConfig(site(ALL, { ...good(), 'client.key': pki.rogueClient.key })), {
      path: 'uplink.tls.key',
      line: 21,
      message: /the key in .*client\.key does not belong to the certificate in uplink\.tls\.cert \(.*client\.pem\)/,
      hint: /made together with this certificate/,
    });
  });

  it('reports every broken file at once, and check-config prints them as file:line and exits 1', async () => {
    const file = site({ ca: 'nope.pem', cert: 'client.pem', key: 'client.pem' }, good());
    expect(errorsOf(await loadConfig(file)).map((e) => [e.path, e.line])).toEqual([
      ['uplink.tls.ca', 19],
      ['uplink.tls.key', 21],
    ]);
    const io = captureLines();
    const { stdout: out, stderr: err } = io;
    expect(await checkConfigCommand(file, io)).toBe(1);
    expect(out).toEqual([]);
    expect(err[0]).toMatch(new RegExp(`^${file.replace(/[.]/g, '\\.')}:19:5 uplink\\.tls\\.ca: file not found`));
    expect(err[1]).toMatch(/:21:5 uplink\.tls\.key: .* holds no PEM private key/);
    expect(err.at(-1)).toBe(`2 errors in ${file}`);
  });

  it('does not look at files while the rest of site.yaml has mistakes', async () => {
    // the text's own mistakes come first; the files are read once those are fixed
    const dir = join(pki.dir, `site-${n++}`);
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'site.yaml'),
      text(
        withAppended(
          ['uplink:', '  url: mqtts://b:8883', '  keepaliveSeconds: 1', '  tls:', '    ca: nope.pem'],
          MINIMAL,
        ),
      ),
    );
    expectSingleError(await loadConfig(join(dir, 'site.yaml')), {
      path: 'uplink.keepaliveSeconds',
      line: 18,
      message: /./,
      hint: /between 5 and 3600/,
    });
  });
});
