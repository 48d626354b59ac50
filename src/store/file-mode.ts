/**
 * The database holds token hashes, client secret hashes and the key that signs page tokens, so
 * only the sitegw user may read it: the folder is created 0700 and the file 0600 before SQLite
 * opens it (SQLite gives its -wal and -shm files the database file's mode). A file an earlier
 * version or a hand-run command left readable by others is tightened at open, and that is
 * logged. An existing folder is left as the installer made it (systemd's StateDirectory, say).
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const DATA_DIR_MODE = 0o700;
const DATA_FILE_MODE = 0o600;
const SIDE_FILES = ['', '-wal', '-shm'];

export type ModeLog = (fields: Record<string, unknown>, msg: string) => void;

const stderrLog: ModeLog = (fields, msg) => process.stderr.write(`sitegw: ${msg} ${JSON.stringify(fields)}\n`);

/** Creates the folder and an empty database file with private modes, or tightens what exists. */
export function secureDataFile(file: string, warn: ModeLog = stderrLog): void {
  const dir = dirname(resolve(file));
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
  // 'a' creates the file when missing and leaves an existing one untouched
  closeSync(openSync(file, 'a', DATA_FILE_MODE));
  for (const suffix of SIDE_FILES) {
    const f = file + suffix;
    let mode: number;
    try {
      mode = statSync(f).mode & 0o777;
    } catch {
      continue; // no -wal or -shm yet: SQLite creates them with the database's mode
    }
    if ((mode & ~DATA_FILE_MODE) === 0) continue;
    try {
      chmodSync(f, DATA_FILE_MODE);
      warn(
        { file: f, was: mode.toString(8), now: DATA_FILE_MODE.toString(8) },
        'the database file was readable by other users: its mode is now 0600',
      );
    } catch (err) {
      warn(
        { file: f, mode: mode.toString(8), err: String(err) },
        'the database file is readable by other users and its mode could not be changed: chmod 600 it as its owner',
      );
    }
  }
}
