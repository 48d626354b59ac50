import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openRunTmpdir } from '../support/run-tmpdir.js';

describe("the run's temporary folder", () => {
  it('holds what the processes of the run make in the temporary folder, and goes at the end with all of it', () => {
    const outer = process.env.TMPDIR;
    const outerVar = process.env.SITEGW_RUN_TMPDIR;
    // as outside a run (this file runs inside one, whose folder it must not take)
    delete process.env.SITEGW_RUN_TMPDIR;
    const close = openRunTmpdir();
    const dir = process.env.TMPDIR!;
    try {
      expect(dir).not.toBe(outer);
      expect(dirname(dir)).toBe(outer ?? dirname(dir));
      expect(tmpdir()).toBe(dir);
      // other users (postgres, nobody) pass through it as through /tmp
      expect(statSync(dir).mode & 0o7777).toBe(0o1777);
      // a spawned process (a daemon, socat) takes it from the environment
      const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(require("node:os").tmpdir())']);
      expect(child.stdout.toString()).toBe(dir);
      // what a test forgot to remove
      mkdirSync(join(dir, 'sitegw-pty-left', 'nested'), { recursive: true });
      writeFileSync(join(dir, 'sitegw-pty-left', 'nested', 'f'), 'x');
      // a second project's setup, or a vitest a test runs, keeps the one folder: nested, four
      // deep, they took unix sockets' paths (postgres, Chromium) past 107 bytes
      const again = openRunTmpdir();
      expect(process.env.TMPDIR).toBe(dir);
      again();
      expect(existsSync(dir)).toBe(true);
    } finally {
      close();
      if (outerVar !== undefined) process.env.SITEGW_RUN_TMPDIR = outerVar;
    }
    expect(existsSync(dir)).toBe(false);
    expect(process.env.TMPDIR).toBe(outer);
  });

  it('is set up for every run of the suite', () => {
    const config = readFileSync(join(import.meta.dirname, '../../vitest.config.ts'), 'utf8');
    expect(config).toMatch(/globalSetup: \[[^\]]*'\.\/test\/support\/run-tmpdir\.ts'/);
  });
});
