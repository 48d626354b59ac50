/**
 * The demo as a person starts it: on a terminal (a pseudo-terminal from util-linux `script`, part
 * of every Debian), its log lines are words and nothing raw comes before the banner; the
 * simulator's Modbus and control ports can be pinned with flags; Ctrl-C stops it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sitegwCommand } from '../support/cli.js';
import { waitFor } from '../support/demo.js';

/** A port free right now on 127.0.0.1. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

let child: ChildProcess | undefined;
let dir: string | undefined;
afterEach(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('sitegw demo on a terminal', () => {
  it('logs in words, prints nothing raw before the banner, uses the pinned ports, and stops on Ctrl-C', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sitegw-tty-'));
    const [inverter, meter, control] = [await freePort(), await freePort(), await freePort()];
    const [node, args] = sitegwCommand([
      'demo',
      '--port',
      '0',
      '--data-dir',
      dir,
      '--speed',
      '60',
      '--inverter-port',
      String(inverter),
      '--meter-port',
      String(meter),
      '--sim-control-port',
      String(control),
    ]);
    const env: NodeJS.ProcessEnv = { ...process.env, SITEGW_LOG_LEVEL: 'info' };
    delete env.SITEGW_LOG_FORMAT;
    delete env.JOURNAL_STREAM;
    // script runs the command through $SHELL -c. CI has no SHELL, so that is dash, which does not
    // exec a lone command: Ctrl-C killed the waiting shell (exit 130) while the demo still stopped.
    // `exec` makes the demo the terminal's foreground process under any shell.
    env.SHELL = '/bin/sh';
    // -q quiet, -f flush at once, -e the command's exit status, -c the command; the typescript file: none
    const command = `exec ${[node, ...args].map(quote).join(' ')}`;
    child = spawn('script', ['-qfec', command, '/dev/null'], { env });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
    child.once('error', (e) => {
      out += `spawn failed: ${e.message} (util-linux script is needed: Debian's bsdutils)`;
    });
    await waitFor('the banner', () => out.includes('Ctrl-C') || out.includes('spawn failed'), 60_000);
    expect(out).not.toContain('spawn failed');
    const text = out.replace(/\r/g, '');
    const before = text.slice(0, text.indexOf('sitegw demo is running')).split('\n').filter(Boolean);
    expect(before.length, text).toBeGreaterThan(0);
    for (const line of before)
      expect(line, 'a log line in words').toMatch(/^\d\d:\d\d:\d\d (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) /);
    expect(before.some((l) => l.includes('{"'))).toBe(false);
    // the pinned ports: in the banner, and answering
    expect(text).toContain(`inverter 127.0.0.1:${inverter}, meters 127.0.0.1:${meter}`);
    expect(text).toContain(`http://127.0.0.1:${control}/grid-outage`);
    expect(text).toMatch(/Status page: +http:\/\/127\.0\.0\.1:\d+\/ /);
    for (const port of [inverter, meter, control])
      await new Promise<void>((resolve, reject) => {
        const s = connect(port, '127.0.0.1', () => {
          s.destroy();
          resolve();
        });
        s.once('error', reject);
      });
    // Ctrl-C on the terminal: SIGINT to the demo, which stops cleanly
    child.stdin!.write('\x03');
    expect(await exited).toBe(0);
  });

  it('stops at Ctrl-C during the history pre-fill (behind the banner), without waiting for it to end', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sitegw-tty-'));
    // a year of history takes minutes of CPU to fill: the old demo heard no signal until it ended
    const [node, args] = sitegwCommand(['demo', '--port', '0', '--data-dir', dir, '--history', 'P366D']);
    const env: NodeJS.ProcessEnv = { ...process.env, SITEGW_LOG_LEVEL: 'info', SITEGW_LOG_FORMAT: 'json' };
    child = spawn(node, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
    await waitFor('the pre-fill to begin', () => out.includes('pre-filling history'), 60_000);
    child.kill('SIGINT');
    expect(await exited, out).toBe(0);
    expect(out).toContain('history pre-fill stopped early');
    // the fill runs behind the banner (issue 46): the banner came first
    expect(out.indexOf('sitegw demo is running')).toBeGreaterThan(-1);
    expect(out.indexOf('sitegw demo is running')).toBeLessThan(out.indexOf('pre-filling history'));
  });
});
