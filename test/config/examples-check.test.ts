/**
 * `sitegw check-config` passes what `sitegw run` starts and refuses what it refuses, because both
 * load site.yaml through the same loadConfig, TLS files included: every YAML in examples/ passes
 * as shipped, and a missing certificate is named with its line and a hint by both commands.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sitegwCommand } from '../support/cli.js';
import { MINIMAL, text, withAppended } from './fixtures.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'sitegw-examples-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function sitegw(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(...sitegwCommand(args), { cwd: ROOT });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

describe('check-config and run agree', () => {
  const examples = readdirSync(join(ROOT, 'examples')).filter((f) => /\.ya?ml$/.test(f));

  it('there are examples', () => expect(examples.length).toBeGreaterThan(0));

  it.each(examples)('examples/%s passes check-config where it is', async (name) => {
    // --offline: with site limits check-config asks the inverters, and the examples' devices are at
    // LAN addresses (192.168.x) no test may reach
    const r = await sitegw(['check-config', '--offline', join(ROOT, 'examples', name)]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^OK: /);
  });

  it('a missing http.tls certificate: both commands name it with its line and a hint, and exit 1', async () => {
    const file = join(dir, 'site.yaml');
    writeFileSync(
      file,
      text(withAppended(['http:', '  tls:', '    cert: tls/missing-cert.pem', '    key: tls/missing-key.pem'])),
    );
    const line = MINIMAL.length + 3;
    const expected = [
      `${file}:${line}:5 http.tls.cert: file not found (looked at ${join(dir, 'tls/missing-cert.pem')}) — check the path; a relative path is taken from the folder of site.yaml`,
      `${file}:${line + 1}:5 http.tls.key: file not found (looked at ${join(dir, 'tls/missing-key.pem')}) — check the path; a relative path is taken from the folder of site.yaml`,
    ];
    const check = await sitegw(['check-config', file]);
    expect(check.code).toBe(1);
    expect(check.err.split('\n').slice(0, 2)).toEqual(expected);
    const run = await sitegw(['run', '--config', file]);
    expect(run.code).toBe(1);
    expect(run.err.split('\n').slice(0, 2)).toEqual(expected);
  });
});
