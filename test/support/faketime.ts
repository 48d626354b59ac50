/**
 * libfaketime (Debian `faketime`) for a child process's wall clock: the offset is re-read from a
 * file (at most a second old: FAKETIME_CACHE_DURATION=1), so a test steps the clock of a running
 * daemon; FAKETIME_DONT_FAKE_MONOTONIC=1 leaves CLOCK_MONOTONIC alone, so performance.now() and
 * libuv's timers run on real time, as on a Pi whose wall clock NTP steps.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
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
export async function runUnderFakeClock(config: string, offsetFile: string): Promise<FakeClockRun> {
  const child = spawn(...sitegwCommand(['run', '--config', config]), {
    cwd: ROOT,
    env: { ...process.env, SITEGW_LOG_LEVEL: 'info', ...fakeClockEnv(offsetFile) },
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
