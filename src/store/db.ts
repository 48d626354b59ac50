import { existsSync } from 'node:fs';
import type { Database } from 'better-sqlite3';
import {
  CRED_MIGRATIONS,
  CRED_SCHEMA,
  copyCredentialsFromMain,
  credentialsFileOf,
  dropCredentialsFromMain,
  mainHoldsCredentials,
} from './credentials.js';
import { sqliteDriver } from './driver.js';
import { type ModeLog, secureDataFile } from './file-mode.js';
import { CREDENTIALS_MOVED, MIGRATIONS, type Migration } from './migrations.js';
import { perConnection } from './per-connection.js';

export type { Database } from 'better-sqlite3';

/** The file was written by a newer sitegw: running old code on it could corrupt what it stores. */
export class DatabaseVersionError extends Error {
  constructor(
    readonly file: string,
    readonly found: number,
    readonly supported: number,
  ) {
    super(
      `database ${file} has schema version ${found}, but this sitegw knows versions up to ${supported}: ` +
        `it was written by a newer sitegw. Install that version again, or point dataDir at another directory.`,
    );
    this.name = 'DatabaseVersionError';
  }
}

/** Writers on a Pi's SD card can stall for a while; wait rather than fail with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000;
/**
 * SQLite's own page cache per connection, in KiB (negative: a size, not a page count). better-sqlite3
 * builds SQLite with 16 MiB (SQLITE_DEFAULT_CACHE_SIZE=-16000 in its deps/defines.gypi), which a
 * year of partner queries fills and SQLite never gives back: 16 MiB of a Pi's memory copying pages
 * the kernel's file cache holds anyway. 2 MiB keeps the open buckets' and indexes' hot pages.
 * https://sqlite.org/pragma.html#pragma_cache_size
 */
export const CACHE_KIB = 2048;
/** WAL frames (pages) between automatic checkpoints */
export const WAL_AUTOCHECKPOINT = 2000;

/**
 * Opens (and migrates) the database. `exclusive`: for this connection alone, with the WAL index in
 * memory instead of the -shm file, which is how SQLite opens a file on a full disk (the -shm cannot
 * grow there: SQLITE_IOERR_SHMSIZE). Other processes then wait until this one closes it.
 * https://sqlite.org/wal.html#noshm
 */
export function openDatabase(file: string | ':memory:', warn?: ModeLog, opts: { exclusive?: boolean } = {}): Database {
  const credFile = credentialsFileOf(file);
  if (file !== ':memory:') {
    secureDataFile(file, warn);
    secureDataFile(credFile, warn);
  }
  const db = new (sqliteDriver())(file);
  try {
    // before the first read: that is when SQLite opens the WAL and its index; it holds for the
    // attached credentials file too
    if (opts.exclusive) db.pragma('locking_mode = EXCLUSIVE');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma(`cache_size = -${CACHE_KIB}`);
    db.prepare(`ATTACH DATABASE ? AS ${CRED_SCHEMA}`).run(credFile);
    for (const schema of ['main', CRED_SCHEMA]) {
      db.pragma(`${schema}.journal_mode = WAL`);
      // WAL + NORMAL can lose the last commits on power loss but never corrupts; an fsync per
      // 15-minute close is not worth the SD-card wear. The energy counts live views show are synced
      // off the event loop before they are shown (store/energy-state.ts syncToDisk).
      db.pragma(`${schema}.synchronous = NORMAL`);
    }
    db.pragma('foreign_keys = ON');
    // A checkpoint copies every page changed since the last one into the file: the fewer, the fewer
    // copies of the pages each close rewrites (the energy state's, the recent buckets' last). 2000
    // frames (8 MiB of WAL, about four days of a home site) instead of SQLite's 1000: a settled day
    // of bench/disk-writes.ts 1.97 MB instead of 2.06. https://sqlite.org/pragma.html#pragma_wal_autocheckpoint
    db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT}`);
    migrate(db, CRED_MIGRATIONS, credFile, CRED_SCHEMA);
    // the layout before the credentials file, or a restored backup: the rows are copied over in a
    // commit of their own before main's tables are dropped (credentials.ts copyCredentialsFromMain)
    if (mainHoldsCredentials(db)) {
      writeTx(db, () => copyCredentialsFromMain(db));
      // a backup restored by hand carries its credentials in main (ops/backup.ts): moved over the same way
      if (schemaVersion(db) >= CREDENTIALS_MOVED) writeTx(db, () => dropCredentialsFromMain(db));
    }
    migrate(db, MIGRATIONS, file);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/**
 * Opens the database and its credentials file for reading only (a read-only data directory, a
 * look from another process): nothing is created or migrated, and a write fails with
 * SQLITE_READONLY. An attached file takes the main connection's read-only flag.
 */
export function openReadOnly(file: string): Database {
  const db = new (sqliteDriver())(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma(`cache_size = -${CACHE_KIB}`);
    // a file of the layout before the credentials file holds them itself: the schema is there, empty
    const cred = credentialsFileOf(file);
    db.prepare(`ATTACH DATABASE ? AS ${CRED_SCHEMA}`).run(existsSync(cred) ? cred : ':memory:');
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/**
 * Runs `fn` as one transaction that takes SQLite's write lock at BEGIN (IMMEDIATE), and returns
 * what it returns. A deferred transaction that reads first and writes after cannot wait for the
 * lock: when another connection writes meanwhile (`sitegw clients` or `control release` in another
 * process, a test's writer), SQLite answers SQLITE_BUSY at once, without the busy timeout, since
 * waiting could deadlock. IMMEDIATE waits up to busy_timeout at BEGIN instead. Every transaction
 * of the gateway goes through here (test/architecture checks it).
 * https://sqlite.org/lang_transaction.html#deferred_immediate_and_exclusive_transactions
 */
export function writeTx<T>(db: Database, fn: () => T): T {
  return db.transaction(fn).immediate();
}

// two plain statements: the pragma's table-valued form cost twice as much (a virtual table)
const stampStmts = perConnection((db) => ({
  own: db.prepare<[], number>('SELECT total_changes()').pluck(),
  others: db.prepare<[], number>('PRAGMA data_version').pluck(),
  // `sitegw clients` writes the credentials file, whose commits main's data_version does not count
  othersCred: db.prepare<[], number>(`PRAGMA ${CRED_SCHEMA}.data_version`).pluck(),
}));

/**
 * A pair that moves whenever anything in the file may have changed: rows this connection changed
 * (total_changes) and commits by any other connection, such as `sitegw clients` in another
 * process (data_version). Equal stamps mean nothing was written in between, so what was read
 * under the first still holds; a rolled-back write still moves it, a needless re-read at worst.
 * https://sqlite.org/pragma.html#pragma_data_version
 */
export function changeStamp(db: Database): readonly [number, number] {
  const s = stampStmts(db);
  // both versions only grow (per connection), so their sum moves whenever either does
  return [s.own.get()!, s.others.get()! + s.othersCred.get()!];
}

export function schemaVersion(db: Database, schema = 'main'): number {
  return db.pragma(`${schema}.user_version`, { simple: true }) as number;
}

/**
 * Brings the schema up to `migrations.length`, one transaction per step so a crash leaves the
 * file at a known version. IMMEDIATE takes the write lock before the version is re-read, so two
 * processes opening the same file cannot both run a step.
 */
export function migrate(
  db: Database,
  migrations: readonly Migration[] = MIGRATIONS,
  file = db.name,
  schema = 'main',
): void {
  const target = migrations.length;
  const found = schemaVersion(db, schema);
  if (found > target) throw new DatabaseVersionError(file, found, target);
  for (let v = found; v < target; v++) {
    const step = db.transaction(() => {
      const now = schemaVersion(db, schema);
      if (now > v) return;
      migrations[v]!.up(db);
      db.pragma(`${schema}.user_version = ${v + 1}`);
    });
    step.immediate();
  }
}
