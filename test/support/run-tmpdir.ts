/**
 * vitest's global setup: every temporary folder a test run makes goes into one folder of the run,
 * removed when the run ends. os.tmpdir() reads TMPDIR, which the workers and every process they
 * spawn (daemons, socat, postgres) inherit. Folders a test did not remove were left in /tmp for
 * good: the pty pairs' and the demos' data folders of killed runs, 42 per run of the suite
 * (2026-12-03, 231 after five runs). One folder for the run removes them all, whichever test
 * forgot, where removing them one by one fixes only the tests found.
 */
import { tmpdir } from 'node:os';
import { openRunFolder } from './run-folder.js';

/** Points TMPDIR at a new folder under the current one, unless the run has one; the returned teardown removes the folder it made. */
export function openRunTmpdir(): () => void {
  return openRunFolder({
    variable: 'SITEGW_RUN_TMPDIR',
    also: 'TMPDIR',
    under: tmpdir(),
    prefix: 'sitegw-run-',
    // as /tmp is: tests hand folders to other users (postgres, nobody), who must pass through this one
    mode: 0o1777,
  });
}

export default function setup(): () => void {
  return openRunTmpdir();
}
