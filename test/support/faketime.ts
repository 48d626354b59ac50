/**
 * libfaketime (Debian `faketime`) for a child process's wall clock: the offset is re-read from a
 * file (at most a second old: FAKETIME_CACHE_DURATION=1), so a test steps the clock of a running
 * daemon; FAKETIME_DONT_FAKE_MONOTONIC=1 leaves CLOCK_MONOTONIC alone, so performance.now() and
 * libuv's timers run on real time, as on a Pi whose wall clock NTP steps.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, sitegwCommand } from './cli.js';
import { waitFor } from './demo.js';

/** libfaketime's multi-threaded build (Node runs threads), wherever Debian put it for this arch; null without it */
export const LIBFAKETIME: string | null = (() => {
  try {
    for (const d of readdirSync('/usr/lib')) {
      const f = join('/usr/lib', d, 'faketime', 'libfaketimeMT.so.1');
      if (existsSync(f)) return f;
    }
  } catch {}
  return null;
})();

/** The environment that puts a child's wall clock under `offsetFile`. */
export function fakeClockEnv(offsetFile: string): Record<string, string> {
  if (!LIBFAKETIME) throw new Error('libfaketime is not installed (apt-get install faketime)');
  return {
    LD_PRELOAD: LIBFAKETIME,
    FAKETIME_TIMESTAMP_FILE: offsetFile,
    FAKETIME_CACHE_DURATION: '1',
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
}

/** The child's wall clock reads `at` (ms epoch) now, and runs on from there. */
export function setFakeClock(offsetFile: string, at: number): void {
  const s = (at - Date.now()) / 1000;
  writeFileSync(offsetFile, `${s >= 0 ? '+' : ''}${s.toFixed(3)}\n`);
}

export interface FakeClockRun {
  child: ChildProcess;
  /** stdout and stderr so far (the JSON log) */
  out: () => string;
  url: string;
  exit: Promise<number | null>;
}

/** `sitegw run --config FILE` with its wall clock under `offsetFile`, once it serves. */
export async function runUnderFakeClock(
  config: string,
  offsetFile: string,
  env: Record<string, string> = {},
): Promise<FakeClockRun> {
  const child = spawn(...sitegwCommand(['run', '--config', config]), {
    cwd: ROOT,
    env: { ...process.env, SITEGW_LOG_LEVEL: 'info', ...env, ...fakeClockEnv(offsetFile) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  const url = await Promise.race([
    waitFor('sitegw started', () => /"url":"(http:[^"]+)".*sitegw started/.exec(out)?.[1], 60_000),
    exit.then((c) => Promise.reject(new Error(`sitegw run exited (${c}): ${out}`))),
  ]);
  return { child, out: () => out, url, exit };
}

/**
 * systemd-timesyncd's flag file for a daemon under test (SITEGW_TIMESYNC_FLAG, read with
 * SITEGW_TEST_HOOKS=1: src/ops/time-sync.ts): its directory without the file is "not
 * synchronised yet", as on a Pi just booted; sync() makes it NTP's first synchronisation.
 */
export function timesyncFlag(dir: string): { env: Record<string, string>; sync: () => void; unsync: () => void } {
  const flagDir = join(dir, 'timesync');
  const flag = join(flagDir, 'synchronized');
  mkdirSync(flagDir, { recursive: true });
  return {
    env: { SITEGW_TEST_HOOKS: '1', SITEGW_TIMESYNC_FLAG: flag },
    sync: () => writeFileSync(flag, ''),
    unsync: () => rmSync(flag, { force: true }),
  };
}
