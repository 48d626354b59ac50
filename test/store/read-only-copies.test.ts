/**
 * The read-only copies killed daemons leave (src/store/read-only.ts removeDeadCopies): a folder
 * named for a process that is gone is removed; this process's, a live one's and anything not a
 * copy stay.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeDeadCopies } from '../../src/store/read-only.js';

describe('removeDeadCopies', () => {
  const base = mkdtempSync(join(tmpdir(), 'sitegw-copies-'));
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('removes the copies of processes that are gone, with their files, and nothing else', () => {
    // a pid that was a process a moment ago
    const gone = spawnSync(process.execPath, ['-e', 'console.log(process.pid)']).stdout.toString().trim();
    const folder = (name: string) => {
      mkdirSync(join(base, name));
      writeFileSync(join(base, name, 'sitegw.db'), 'x');
      return name;
    };
    const dead = folder(`sitegw-readonly-${gone}-abc123`);
    const own = folder(`sitegw-readonly-${process.pid}-def456`);
    // pid 1 is always there
    const live = folder('sitegw-readonly-1-ghi789');
    const older = folder('sitegw-readonly-XyZ123');
    const other = folder(`sitegw-harness-${gone}-x`);
    expect(removeDeadCopies([base, join(base, 'not-there')])).toEqual([join(base, dead)]);
    expect(readdirSync(base).sort()).toEqual([own, live, older, other].sort());
    expect(existsSync(join(base, dead))).toBe(false);
  });
});
