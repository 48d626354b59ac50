import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeFaketimeLeftovers } from '../support/faketime-leftovers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the run teardown for libfaketime', () => {
  it('removes the segments and semaphores of processes that are gone, and nothing else', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sitegw-shm-'));
    dirs.push(dir);
    // a process that has exited: its pid is free (reuse within this test is not a concern here)
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    const mine = String(process.pid);
    const names = [
      `faketime_shm_${gone}`,
      `sem.faketime_sem_${gone}`,
      `faketime_shm_${mine}`,
      `sem.faketime_sem_${mine}`,
      'sitegw-1-energy.json',
      'faketime_shm_notapid',
    ];
    for (const n of names) writeFileSync(join(dir, n), '');
    expect(removeFaketimeLeftovers(dir)).toBe(2);
    expect(readdirSync(dir).sort()).toEqual(names.slice(2).sort());
    expect(existsSync(join(dir, `faketime_shm_${gone}`))).toBe(false);
  });

  it('a folder that is not there is no error', () => {
    expect(removeFaketimeLeftovers(join(tmpdir(), 'sitegw-no-such-shm'))).toBe(0);
  });
});
