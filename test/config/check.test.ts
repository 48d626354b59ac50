import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkConfigCommand } from '../../src/cli/check-config.js';
import { sitegwCommand } from '../support/cli.js';
import { captureLines as capture } from '../support/output.js';
import { exampleElsewhere, MINIMAL, text, withAppended } from './fixtures.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sitegw-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, content: string): string {
  const file = join(dir, name);
  writeFileSync(file, content);
  return file;
}

describe('sitegw check-config', () => {
  it('returns 0 and summarises a valid file', async () => {
    const io = capture();
    const file = write(
      'ok.yaml',
      text(
        withAppended([
          '  - id: bat',
          '    role: battery',
          '    profile: sunspec',
          '    pollIntervalSeconds: 30',
          '    connection: { type: tcp, host: 192.168.1.50, unitId: 2 }',
        ]),
      ),
    );
    expect(await checkConfigCommand(file, io)).toBe(0);
    expect(io.stderr).toEqual([]);
    expect(io.stdout[0]).toBe("OK: site 'home' with 2 devices");
    expect(io.stdout).toHaveLength(3);
    expect(io.stdout[1]).toMatch(/inv, inverter, profile sunspec, tcp 192\.168\.1\.50:502 unit 1, every 10s/);
    expect(io.stdout[2]).toMatch(/bat, battery, .*unit 2, every 30s, on inv/);
  });

  it('returns 0 for the shipped example', async () => {
    const io = capture();
    const file = write('site.yaml', exampleElsewhere());
    expect(await checkConfigCommand(file, io)).toBe(0);
    expect(io.stdout[0]).toMatch(/^OK: site 'miller-home' with 5 devices$/);
  });

  it('returns 1 and prints file:line:col errors to stderr for an invalid file', async () => {
    const io = capture();
    const file = write('bad.yaml', text(withAppended(['      port: 70000', 'http:', '  prot: 80'])));
    expect(await checkConfigCommand(file, io)).toBe(1);
    expect(io.stdout).toEqual([]);
    expect(io.stderr).toEqual([
      `${file}:16:7 devices[0].connection.port: must be at most 65535, got 70000 — use the device's Modbus TCP port, usually 502`,
      `${file}:18:3 http.prot: unknown key 'prot' — did you mean 'port'? — allowed keys here: host, port, tls, insecure`,
      `2 errors in ${file}`,
    ]);
  });

  it('returns 1 for a YAML syntax error, without a stack trace', async () => {
    const io = capture();
    const file = write('tabs.yaml', text(MINIMAL).replace('  name: Home', '\tname: Home'));
    expect(await checkConfigCommand(file, io)).toBe(1);
    expect(io.stderr[0]).toBe(
      `${file}:3:1 a tab is used for indentation — indent with spaces only (two per level); set the editor to insert spaces for tabs`,
    );
    expect(io.stderr.join('\n')).not.toMatch(/\n\s+at /);
  });

  it('returns 2 when the file does not exist', async () => {
    const io = capture();
    const file = join(dir, 'missing.yaml');
    expect(await checkConfigCommand(file, io)).toBe(2);
    expect(io.stderr).toEqual([
      `${file} file not found (looked at ${file}) — check the path; examples/site.example.yaml is a starting point`,
    ]);
  });

  it('returns 2 when the path is a folder', async () => {
    const io = capture();
    const folder = join(dir, 'conf.d');
    mkdirSync(folder);
    expect(await checkConfigCommand(folder, io)).toBe(2);
    expect(io.stderr[0]).toMatch(/is a folder, not a file/);
  });

  it('returns 2 when the file cannot be read', () => {
    const file = write('secret.yaml', text(MINIMAL));
    chmodSync(file, 0o000);
    chmodSync(dir, 0o755);
    // root reads any file: as root the check runs as nobody, in a process of its own
    const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    const r = spawnSync(...sitegwCommand(['check-config', file]), {
      cwd: ROOT,
      encoding: 'utf8',
      ...asNobody,
    });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/no permission to read the file/);
  });
});
