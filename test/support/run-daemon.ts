/**
 * `sitegw run`'s daemon in its own process on a clock shared with the test's simulator
 * (test/crash/daemon-child.ts), for tests that kill and restart it: the crash suite and the
 * retention e2e test. `started` resolves with its API URL once it listens.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from 'better-sqlite3';
import { sqliteDriver } from '../../src/store/driver.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface DaemonChild {
  proc: ChildProcess;
  started: Promise<string>;
  /** stdout so far: the "started" line and the daemon's log lines */
  out: () => string;
}

export function spawnDaemonChild(o: {
  confFile: string;
  /** the shared clock: speed, and simulated ms at the real ms origin */
  clock: { speed: number; originSim: number; originReal: number };
  nodeArgs?: string[];
  env?: Record<string, string>;
  stderr?: 'inherit' | 'ignore';
}): DaemonChild {
  const proc = spawn(
    process.execPath,
    [...(o.nodeArgs ?? []), '--import', 'tsx', join(ROOT, 'test/crash/daemon-child.ts'), o.confFile],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', o.stderr ?? 'ignore'],
      env: {
        ...process.env,
        SITEGW_LOG_LEVEL: 'silent',
        // the demo client in the data directory, so the test asks the API as a partner
        SITEGW_CRASH_CREDENTIALS: '1',
        ...o.env,
        SITEGW_CLOCK: `${o.clock.speed},${o.clock.originSim},${o.clock.originReal}`,
      },
    },
  );
  let out = '';
  const started = new Promise<string>((resolve, reject) => {
    proc.stdout!.on('data', (d) => {
      out += String(d);
      const url = /started (\S+)\n/.exec(out)?.[1];
      if (url) resolve(url);
    });
    proc.once('exit', (code, sig) => reject(new Error(`daemon exited before it started (${code ?? sig})`)));
  });
  started.catch(() => undefined);
  return { proc, started, out: () => out };
}

/** Resolves once the process has exited (at once if it has). */
export const exited = (p: ChildProcess) =>
  new Promise<void>((r) => (p.exitCode !== null || p.signalCode !== null ? r() : p.once('exit', () => r())));

/** `fn` on a read-only connection to the daemon's database, closed after. */
export function readDb<T>(file: string, fn: (db: Database) => T): T {
  const Driver = sqliteDriver();
  const db = new Driver(file, { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}
