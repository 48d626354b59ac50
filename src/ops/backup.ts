/**
 * A consistent copy of the database while the daemon runs (`sitegw backup`, src/cli/backup.ts).
 * SQLite's online backup API (better-sqlite3 `db.backup()`) copies page by page from a second,
 * read-only connection; in WAL mode the daemon keeps writing meanwhile and the copy is one
 * snapshot. The copy is written beside OUT, checked with quick_check, then renamed into place,
 * so OUT is never half a file. The credentials file (store/credentials.ts) is copied the same way
 * and put into the same file, so a backup is one file; openDatabase moves the credentials back
 * into their own file when it is restored. It holds the API clients' and owner's hashed secrets:
 * mode 0600.
 */
import { chmodSync, copyFileSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { embedCredentials } from '../store/backup-file.js';
import { credentialsFileOf } from '../store/credentials.js';
import { openDatabase } from '../store/db.js';
import { sqliteDriver } from '../store/driver.js';
import { quickCheck } from './integrity.js';

export interface BackupResult {
  file: string;
  bytes: number;
}

/**
 * `replace`: the scheduled backups (ops/backup-schedule.ts) put a new copy over the last one, by a
 * rename once it checked out; `credentialsOnly`: a copy of credentials.db alone.
 */
export async function backupDatabase(
  dbFile: string,
  out: string,
  opts: { replace?: boolean; credentialsOnly?: boolean } = {},
): Promise<BackupResult> {
  const target = resolve(out);
  if (existsSync(target) && !opts.replace)
    throw new Error(`${target} exists; choose a new file name (a backup never overwrites)`);
  if (!existsSync(dbFile)) throw new Error(`no database at ${dbFile} (is dataDir right?)`);
  const partial = `${target}.partial`;
  rmSync(partial, { force: true });
  const partialCred = `${target}.partial-cred`;
  const credFile = credentialsFileOf(dbFile);
  try {
    await copyOnline(opts.credentialsOnly ? credFile : dbFile, partial);
    if (!opts.credentialsOnly && existsSync(credFile)) {
      await copyOnline(credFile, partialCred);
      const db = new (sqliteDriver())(partial);
      try {
        db.prepare('ATTACH DATABASE ? AS cred').run(partialCred);
        embedCredentials(db);
      } finally {
        db.close();
      }
    }
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  } finally {
    for (const s of ['', '-wal', '-shm']) rmSync(partialCred + s, { force: true });
  }
  try {
    chmodSync(partial, 0o600);
    const problem = quickCheck(partial);
    if (problem !== null) throw new Error(`the copy failed its check (${problem}); the database itself may be damaged`);
    renameSync(partial, target);
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
  return { file: target, bytes: statSync(target).size };
}

/** SQLite's online backup of one file, from a read-only connection: one consistent snapshot. */
async function copyOnline(from: string, to: string): Promise<void> {
  const src = new (sqliteDriver())(from, { readonly: true, fileMustExist: true });
  try {
    await src.backup(to);
  } finally {
    src.close();
  }
}

export interface RestoreResult {
  /** where the files it replaced went */
  movedAside: string[];
  bytes: number;
}

/**
 * Puts a backup (a `sitegw backup` file or backups/sitegw.db) in place of the data directory's
 * database while the gateway is stopped: the backup is checked first, the files it replaces are
 * kept beside them (`*.before-restore-<time>`), and the first open moves its credentials back into
 * credentials.db and migrates it (store/db.ts).
 */
export function restoreDatabase(backup: string, dbFile: string, now = Date.now()): RestoreResult {
  if (!existsSync(backup)) throw new Error(`no backup at ${backup}`);
  const problem = quickCheck(backup);
  if (problem !== null) throw new Error(`${backup} is damaged (${problem}); choose another backup`);
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const movedAside: string[] = [];
  for (const f of [dbFile, credentialsFileOf(dbFile)])
    for (const s of ['', '-wal', '-shm']) {
      if (!existsSync(f + s)) continue;
      const to = `${f}.before-restore-${stamp}${s}`;
      renameSync(f + s, to);
      if (s === '') movedAside.push(to);
    }
  copyFileSync(backup, dbFile);
  chmodSync(dbFile, 0o600);
  openDatabase(dbFile).close();
  return { movedAside, bytes: statSync(dbFile).size };
}
