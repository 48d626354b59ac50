/**
 * The energy counts of the life in progress, kept in a file in memory every few seconds of
 * readings (issue 41, finding 5). /dev/shm is a tmpfs: a write there costs the SD card nothing and
 * outlives the process (a SIGKILL, a crash, the watchdog's abort, systemd's restart), but not the
 * power, which the durable saves in SQLite cover (store/energy-state.ts, telemetry/bucketer.ts).
 * A start takes, per stream, whichever of the two is newer. Written to a new file and renamed, so
 * a kill mid-write leaves the previous one.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { StoredEnergyState } from './energy-state.js';

/**
 * The folder of the kept-counts files: /dev/shm, else the temporary folder. SITEGW_ENERGY_KEEP_DIR
 * puts them elsewhere: the test suite points it at a folder of its run, removed at its end
 * (test/support/energy-keep-dir.ts), since a clean stop leaves the file on purpose and a test's
 * data folder is gone before anything could remove it: thousands were left in /dev/shm.
 */
export function energyKeepDir(): string {
  return process.env.SITEGW_ENERGY_KEEP_DIR || (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());
}

/** The kept-counts file of a data directory: one per directory, so tests and sites never share one. */
export function energyKeepFile(dataDir: string): string {
  const base = energyKeepDir();
  const id = createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 16);
  return join(base, `sitegw-${id}-energy.json`);
}

/** What a state stands for up to: the newest of its times (ms). */
export function asOf(s: StoredEnergyState): number {
  return Math.max(s.integratedUntil ?? -Infinity, s.counterTs ?? -Infinity, s.heldTs ?? -Infinity);
}

/** The kept states by stream id; empty when there is none or it cannot be read. */
export function readEnergyKeep(file: string): Map<string, StoredEnergyState> {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { v: number; streams: Record<string, StoredEnergyState> };
    if (parsed.v !== 1 || typeof parsed.streams !== 'object' || parsed.streams === null) return new Map();
    return new Map(
      Object.entries(parsed.streams).filter(([, s]) => typeof s?.inWh === 'number' && typeof s.outWh === 'number'),
    );
  } catch {
    return new Map();
  }
}

/** Removes the kept states (a life of another database at the same path). */
export function removeEnergyKeep(file: string): void {
  rmSync(file, { force: true });
}

/** Keeps the states; false when the file could not be written (no /dev/shm room): the durable saves still hold. */
export function writeEnergyKeep(file: string, streams: Map<string, StoredEnergyState>): boolean {
  try {
    const tmp = `${file}.${process.pid}`;
    writeFileSync(tmp, JSON.stringify({ v: 1, streams: Object.fromEntries(streams) }), { mode: 0o600 });
    renameSync(tmp, file);
    return true;
  } catch {
    return false;
  }
}
