/**
 * vitest's global teardown for libfaketime (test/support/faketime.ts): the preloaded library makes a
 * shared-memory segment and a semaphore per process (/dev/shm/faketime_shm_<pid>,
 * sem.faketime_sem_<pid>) and removes them at exit, which a daemon killed by SIGKILL never reaches:
 * the clock harnesses kill on purpose, and each left a pair behind for good (14 pairs after one
 * suite, 2026-12-02). At the end of a run the pairs of processes that no longer exist are removed.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from '../../src/core/process-alive.js';

const SHM = '/dev/shm';
const LEFT = /^(?:faketime_shm_|sem\.faketime_sem_)(\d+)$/;

/** Removes the faketime segments and semaphores whose process is gone; returns how many. */
export function removeFaketimeLeftovers(dir = SHM): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const m = LEFT.exec(name);
    if (!m || processAlive(Number(m[1]))) continue;
    rmSync(join(dir, name), { force: true });
    removed++;
  }
  return removed;
}

export default function setup(): () => void {
  return () => void removeFaketimeLeftovers();
}
