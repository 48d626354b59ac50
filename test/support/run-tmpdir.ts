/**
 * vitest's global setup: every temporary folder a test run makes goes into one folder of the run,
 * removed when the run ends. os.tmpdir() reads TMPDIR, which the workers and every process they
 * spawn (daemons, socat, postgres) inherit. Folders a test did not remove were left in /tmp for
 * good: the pty pairs' and the demos' data folders of killed runs, 42 per run of the suite
 * (2026-12-03, 231 after five runs). One folder for the run removes them all, whichever test
 * forgot, where removing them one by one fixes only the tests found.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** the run's folder, once made: each project's setup and a vitest a test runs find it here */
const VAR = 'SITEGW_RUN_TMPDIR';

/** Points TMPDIR at a new folder under the current one, unless the run has one; the returned teardown removes the folder it made. */
export function openRunTmpdir(): () => void {
  // one folder, not one inside another per project: a unix socket's path has 107 bytes (a
  // folder four deep took postgres's and Chromium's past it)
  if (process.env[VAR] && process.env[VAR] === process.env.TMPDIR) return () => {};
  const before = process.env.TMPDIR;
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-run-'));
  // as /tmp is: tests hand folders to other users (postgres, nobody), who must pass through this one
  chmodSync(dir, 0o1777);
  process.env.TMPDIR = dir;
  process.env[VAR] = dir;
  return () => {
    rmSync(dir, { recursive: true, force: true });
    if (process.env[VAR] === dir) delete process.env[VAR];
    if (process.env.TMPDIR !== dir) return;
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
  };
}

export default function setup(): () => void {
  return openRunTmpdir();
}
