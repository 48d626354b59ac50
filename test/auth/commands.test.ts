/**
 * The installer's commands on a real data directory: `sitegw clients ...` in process (with the
 * output captured), and through the real CLI for the owner password read from stdin.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyOwner } from '../../src/auth/owner.js';
import { clientsCommand } from '../../src/cli/clients.js';
import { tlsCommand } from '../../src/cli/tls.js';
import { demoSiteYaml } from '../../src/demo/default-site.js';
import { openDatabase } from '../../src/store/db.js';
import { sitegwCommand } from '../support/cli.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function site(): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-cmd-'));
  dirs.push(dir);
  const ep = { host: '127.0.0.1', port: 1502 };
  const file = join(dir, 'site.yaml');
  writeFileSync(
    file,
    demoSiteYaml(
      { inverter: ep, meter: { ...ep, port: 1503 } },
      { httpHost: '127.0.0.1', httpPort: 0, dataDir: 'data', pollSeconds: 10, batteryBlocks: 2 },
    ),
  );
  return { dir, file };
}

async function run(cmd: typeof clientsCommand, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await cmd(argv, { out: (s) => (out += s), err: (s) => (err += s) });
  return { code, out, err };
}

describe('sitegw clients', () => {
  it('add shows the secret once; list, assign, rotate-secret and remove work on the same store', async () => {
    const { file } = site();
    const add = await run(clientsCommand, [
      'add',
      'ev-charger',
      '--config',
      file,
      '--name',
      'EV charger',
      '--scope',
      'device.read,device.write',
      '--device',
      'inverter',
      '--device',
      'grid-meter',
    ]);
    expect(add.code).toBe(0);
    const secret = /client secret: (sgw_cs_\S+)/.exec(add.out)![1]!;
    expect(add.out).toContain('scopes:        svc/device.read svc/device.write');
    expect(add.out).toContain('devices:       grid-meter, inverter');

    const list = await run(clientsCommand, ['list', '--config', file]);
    expect(list.out).toContain('ev-charger  (EV charger)');
    expect(list.out).not.toContain(secret);
    expect(list.out).not.toContain('sgw_cs_');

    const assign = await run(clientsCommand, ['assign', 'ev-charger', '--config', file, '--device', 'battery-1']);
    expect(assign.out).toContain('devices:       battery-1');

    const rotated = await run(clientsCommand, ['rotate-secret', 'ev-charger', '--config', file]);
    expect(rotated.code).toBe(0);
    expect(/client secret: (sgw_cs_\S+)/.exec(rotated.out)![1]).not.toBe(secret);

    const removed = await run(clientsCommand, ['remove', 'ev-charger', '--config', file]);
    expect(removed.out).toContain('removed client ev-charger');
    expect((await run(clientsCommand, ['list', '--config', file])).out).toBe('no clients registered\n');
    const again = await run(clientsCommand, ['remove', 'ev-charger', '--config', file]);
    expect(again).toMatchObject({ code: 1, err: expect.stringContaining("no client 'ev-charger'") });
  });

  it('a mistake is one line and exit code 1; bad usage 2', async () => {
    const { file, dir } = site();
    const unknown = await run(clientsCommand, ['add', 'x', '--config', file, '--device', 'boiler']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toBe(
      "sitegw clients add: unknown device 'boiler'; devices of this site: inverter, battery-1, battery-2, grid-meter, house-meter\n",
    );
    expect((await run(clientsCommand, ['add', 'app', '--config', file, '--public'])).err).toContain(
      'needs at least one redirect URI',
    );
    const warned = await run(clientsCommand, [
      'add',
      'lan-app',
      '--data-dir',
      join(dir, 'data'),
      '--redirect-uri',
      'http://192.168.1.5/cb',
      '--device',
      'inverter',
    ]);
    expect(warned.code).toBe(0);
    expect(warned.err).toContain('plain http');
    expect(warned.err).toContain('devices were not checked');
    expect((await run(clientsCommand, ['add', '--config', file])).code).toBe(2);
    expect((await run(clientsCommand, ['frob', 'x', '--config', file])).code).toBe(2);
    expect((await run(clientsCommand, ['list'])).code).toBe(2);
  });
});

describe('sitegw tls fingerprint', () => {
  it('says when there is no certificate yet', async () => {
    const { file } = site();
    const r = await run(tlsCommand, ['fingerprint', '--config', file]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('no certificate at');
    expect(r.err).toContain('plain HTTP');
  });
});

describe('sitegw owner set-password (through the CLI)', () => {
  const cli = (args: string[], stdin: string) =>
    new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn(...sitegwCommand(args), { cwd: ROOT });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('exit', (code) => resolve({ code, out, err }));
      child.stdin.end(stdin);
    });

  it('reads the password from stdin and stores what the consent page checks', async () => {
    const { file, dir } = site();
    const ok = await cli(['owner', 'set-password', '--config', file, '--username', 'miller'], 'a long passphrase\n');
    expect(ok.code).toBe(0);
    expect(ok.out).toContain("owner 'miller' can now log in");
    const db = openDatabase(join(dir, 'data', 'sitegw.db'));
    try {
      expect(await verifyOwner(db, 'miller', 'a long passphrase')).toBe(true);
    } finally {
      db.close();
    }
    const short = await cli(['owner', 'set-password', '--config', file], 'short\n');
    expect(short.code).toBe(1);
    expect(short.err).toContain('at least 8 characters');
  });
});
