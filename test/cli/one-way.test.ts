/**
 * Issue 18: the commands print one way and read site.yaml through one loader (src/cli/config.ts).
 * Before, check-config alone counted the mistakes, the installer's commands printed some errors
 * without saying which command refused, and a command word that names a member of
 * Object.prototype ('constructor', 'toString') was taken for a command and ended in a stack.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backupCommand } from '../../src/cli/backup.js';
import { checkConfigArgs } from '../../src/cli/check-config.js';
import { clientsCommand } from '../../src/cli/clients.js';
import { main } from '../../src/cli/index.js';
import type { Output } from '../../src/cli/output.js';
import { ownerCommand } from '../../src/cli/owner.js';
import { restoreCommand } from '../../src/cli/restore.js';
import { runCommand } from '../../src/cli/run.js';
import { tlsCommand } from '../../src/cli/tls.js';
import { text, withAppended } from '../config/fixtures.js';
import { captureLines } from '../support/output.js';

const dir = mkdtempSync(join(tmpdir(), 'sitegw-cli-one-way-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bad = join(dir, 'bad.yaml');
writeFileSync(bad, text(withAppended(['      port: 70000', 'http:', '  prot: 80'])));
const missing = join(dir, 'missing.yaml');

/** Every command that reads site.yaml, as the installer types it. */
const READERS: [string, (file: string, io: Output) => Promise<number>][] = [
  ['run', (file, io) => runCommand(['--config', file], io)],
  ['check-config', (file, io) => checkConfigArgs([file], io)],
  ['backup', (file, io) => backupCommand(['--config', file, join(dir, 'copy.db')], io)],
  ['restore', (file, io) => restoreCommand(['--config', file, join(dir, 'copy.db')], io)],
  ['clients list', (file, io) => clientsCommand(['list', '--config', file], io)],
  ['owner set-password', (file, io) => ownerCommand(['set-password', '--config', file], io)],
  ['tls fingerprint', (file, io) => tlsCommand(['fingerprint', '--config', file], io)],
];

describe('site.yaml mistakes: the same lines and exit code from every command that reads it', () => {
  it.each(READERS)('%s: each mistake with file:line:col and its hint, then the count; exit 1', async (_, command) => {
    const io = captureLines();
    expect(await command(bad, io)).toBe(1);
    expect(io.stdout).toEqual([]);
    expect(io.stderr).toEqual([
      `${bad}:16:7 devices[0].connection.port: must be at most 65535, got 70000 — ` +
        "use the device's Modbus TCP port, usually 502",
      `${bad}:18:3 http.prot: unknown key 'prot' — did you mean 'port'? — ` +
        'allowed keys here: host, port, tls, insecure',
      `2 errors in ${bad}`,
    ]);
  });

  it.each(READERS)('%s: a file that is not there is one line; exit 2', async (_, command) => {
    const io = captureLines();
    expect(await command(missing, io)).toBe(2);
    expect(io.stderr).toEqual([
      `${missing} file not found (looked at ${missing}) — ` +
        'check the path; examples/site.example.yaml is a starting point',
    ]);
  });
});

describe('errors name the command that refused', () => {
  it('clients without --config or --data-dir', async () => {
    const io = captureLines();
    expect(await clientsCommand(['list'], io)).toBe(2);
    expect(io.stderr).toEqual([
      'sitegw clients list: give --config FILE (the site.yaml the daemon runs with) or --data-dir DIR',
    ]);
  });

  it('tls fingerprint before the first HTTPS start', async () => {
    const io = captureLines();
    const data = join(dir, 'data');
    mkdirSync(data);
    expect(await tlsCommand(['fingerprint', '--data-dir', data], io)).toBe(1);
    expect(io.stderr).toEqual([
      `sitegw tls fingerprint: no certificate at ${join(data, 'tls', 'cert.pem')} yet: ` +
        'sitegw creates it on its first start with HTTPS',
    ]);
  });

  const PROTOTYPE_WORDS = ['constructor', 'toString', '__proto__', 'hasOwnProperty'];
  it.each(PROTOTYPE_WORDS)('%s is an unknown command, with or without --help', async (word) => {
    for (const argv of [[word], [word, '--help']]) {
      const io = captureLines();
      expect(await main(argv, io)).toBe(2);
      expect(io.stdout).toEqual([]);
      expect(io.stderr[0]).toBe(`sitegw: unknown command '${word}'`);
    }
  });
});
