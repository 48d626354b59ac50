/**
 * The daemon under an sd_notify listener, as systemd runs it: `sitegw demo` in its own process
 * with NOTIFY_SOCKET pointing at a unix datagram socket that socat binds (Node cannot bind one),
 * WATCHDOG_USEC as systemd sets it for WatchdogSec=. We see READY with a STATUS, steady WATCHDOG
 * pings, none while the event loop is blocked or the poll scheduler is stuck (test hooks), and
 * STOPPING at SIGTERM.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sitegwCommand } from '../support/cli.js';
import { waitFor } from '../support/demo.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const HAVE_SOCAT = spawnSync('socat', ['-V']).status === 0;
if (!HAVE_SOCAT) console.warn('SKIPPED: watchdog tests need socat (apt-get install socat; .ci/run installs it)');

interface Line {
  at: number;
  text: string;
}

describe.skipIf(!HAVE_SOCAT)('sd_notify and the systemd watchdog', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-notify-'));
  const sock = join(dir, 'notify.sock');
  const lines: Line[] = [];
  let listener: ChildProcess;
  let daemon: ChildProcess;
  let stderr = '';
  let exit: Promise<number | null>;

  const seen = (text: string, after = 0) => lines.filter((l) => l.text === text && l.at >= after);
  const watchdogs = (after = 0) => seen('WATCHDOG=1', after);

  beforeAll(async () => {
    listener = spawn('socat', ['-u', `UNIX-RECV:${sock}`, '-']);
    let buf = '';
    listener.stdout!.setEncoding('utf8').on('data', (d: string) => {
      buf += d;
      const parts = buf.split('\n');
      buf = parts.pop()!;
      const at = Date.now();
      for (const text of parts) lines.push({ at, text });
    });
    await waitFor('the listener socket', () => spawnSync('test', ['-S', sock]).status === 0);
    daemon = spawn(...sitegwCommand(['demo', '--port', '0', '--data-dir', join(dir, 'data'), '--speed', '60']), {
      cwd: ROOT,
      env: {
        ...process.env,
        NOTIFY_SOCKET: sock,
        // 1.5 s: the pings come every 0.5 s, the 2.5 s hang below outlasts it, and a loaded machine's
        // pause at start (the health check allows three ticks plus this period) does not fail READY's STATUS
        WATCHDOG_USEC: '1500000',
        SITEGW_TEST_HOOKS: '1',
        SITEGW_TEST_HANG_MS: '2500',
        SITEGW_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    daemon.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    exit = new Promise((resolve) => daemon.on('exit', (code) => resolve(code)));
  }, 60_000);

  afterAll(() => {
    if (daemon.exitCode === null) daemon.kill('SIGKILL');
    listener?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('READY once the daemon serves, with a one-line STATUS', async () => {
    await waitFor(`READY=1 (daemon stderr: ${stderr})`, () => seen('READY=1').length > 0, 60_000);
    const ready = lines.findIndex((l) => l.text === 'READY=1');
    expect(lines[ready + 1]!.text).toMatch(/^STATUS=(ok|degraded): \d+\/5 devices online/);
    // no ping before READY: systemd starts counting at READY
    expect(lines.slice(0, ready).filter((l) => l.text === 'WATCHDOG=1')).toEqual([]);
  }, 70_000);

  it('WATCHDOG pings at a third of WatchdogSec while healthy', async () => {
    const from = Date.now();
    await waitFor('five pings', () => watchdogs(from).length >= 5, 10_000);
  });

  it('a blocked event loop sends no ping until it runs again', async () => {
    await waitFor('pings', () => watchdogs(Date.now() - 1000).length >= 2);
    const sent = Date.now();
    daemon.kill('SIGUSR1');
    // pings resume once the 2.5 s hang is over
    await waitFor('pings after the hang', () => watchdogs(sent + 2000).length >= 2, 15_000);
    const around = watchdogs(sent - 1000).map((l) => l.at);
    const gaps = around.slice(1).map((t, i) => t - around[i]!);
    expect(Math.max(...gaps)).toBeGreaterThanOrEqual(2000);
  });

  it('a stuck poll scheduler withholds the pings and says why in STATUS', async () => {
    const sent = Date.now();
    daemon.kill('SIGUSR2');
    const withheld = await waitFor(
      'STATUS=watchdog withheld',
      () => lines.find((l) => l.at >= sent && l.text.startsWith('STATUS=watchdog withheld:')),
      15_000,
    );
    expect(withheld.text).toMatch(/the poll scheduler has not run for \d+ s/);
    const quietFrom = Date.now();
    await new Promise((r) => setTimeout(r, 2000));
    expect(watchdogs(quietFrom)).toEqual([]);
  }, 20_000);

  it('STOPPING at SIGTERM, and a clean exit', async () => {
    const sent = Date.now();
    daemon.kill('SIGTERM');
    expect(await exit).toBe(0);
    await waitFor('STOPPING=1', () => seen('STOPPING=1', sent).length === 1);
  }, 30_000);
});
