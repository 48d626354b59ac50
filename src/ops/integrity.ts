/**
 * Opening the store with an integrity check first. A database that SQLite finds damaged
 * (PRAGMA quick_check, or SQLITE_CORRUPT / SQLITE_NOTADB while opening) is moved aside with a
 * timestamp and a fresh one is started, so a damaged file on an SD card costs its history but
 * never turns the service into a crash loop. Anything else (permissions, a full disk, a file
 * from a newer sitegw) is not corruption and still stops the start with its own error.
 *
 * quick_check (https://sqlite.org/pragma.html#pragma_quick_check) reads every page but skips the
 * index-content cross-check of integrity_check, which keeps the start fast on a Pi.
 */
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { CACHE_KIB, openDatabase } from '../store/db.js';
import { sqliteDriver } from '../store/driver.js';
import { isStorageFault, isStorageFull } from '../store/storage-faults.js';
import { describeStorageError } from './data-disk.js';

/** What happened to a damaged database at start. */
export interface DatabaseReplaced {
  file: string;
  /** where the damaged file (and its -wal/-shm) went */
  movedTo: string;
  /** SQLite's words */
  reason: string;
  at: number;
}

export interface CheckedStore {
  db: Database;
  replaced: DatabaseReplaced | null;
  /** why the database is open for this process alone (a start on a full disk), or null */
  exclusive: string | null;
}

/** The database cannot be opened for a reason that is not damage: the sentence names the file, SQLite's code and the errno. */
export class StorageOpenError extends Error {
  readonly code = 'STORAGE_UNAVAILABLE';
  constructor(
    readonly file: string,
    override readonly cause: unknown,
  ) {
    super(describeStorageError(cause, file, 'opening'));
    this.name = 'StorageOpenError';
  }
}

/** moved-aside sets kept; older ones are deleted so repeated damage cannot fill the card */
const KEEP_DAMAGED = 2;
const SUFFIXES = ['', '-wal', '-shm'];

export function isCorruption(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB');
}

/** null when quick_check says ok; SQLite's first complaints otherwise. Throws what is not corruption. */
export function quickCheck(file: string, exclusive = false): string | null {
  let db: Database | null = null;
  try {
    db = new (sqliteDriver())(file, { fileMustExist: true });
    if (exclusive) db.pragma('locking_mode = EXCLUSIVE');
    // the check reads every page: with the default cache they would all stay for its duration
    db.pragma(`cache_size = -${CACHE_KIB}`);
    const rows = db.pragma('quick_check(5)', { simple: false }) as { quick_check: string }[];
    const bad = rows.map((r) => r.quick_check).filter((r) => r !== 'ok');
    return bad.length === 0 ? null : bad.join('; ');
  } catch (err) {
    if (isCorruption(err)) return (err as Error).message;
    throw err;
  } finally {
    db?.close();
  }
}

function stamp(at: number): string {
  return new Date(at)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

function moveAside(file: string, at: number): string {
  const aside = `${file}.damaged-${stamp(at)}`;
  for (const s of SUFFIXES) if (existsSync(file + s)) renameSync(file + s, aside + s);
  // keep the newest few sets
  const dir = dirname(file);
  const prefix = `${basename(file)}.damaged-`;
  const sets = readdirSync(dir)
    .filter((n) => n.startsWith(prefix) && !n.endsWith('-wal') && !n.endsWith('-shm'))
    .sort();
  for (const old of sets.slice(0, Math.max(0, sets.length - KEEP_DAMAGED))) {
    for (const s of SUFFIXES) rmSync(join(dir, old + s), { force: true });
  }
  return aside;
}

/**
 * Opens (and migrates) the database at `file`, replacing it when it is damaged. On a full disk it
 * opens it for this process alone (docs/design.md "Field faults: what the numbers survive": a start on a full disk serves);
 * any other fault of the storage stops the start with the path, SQLite's code and the errno.
 */
export function openCheckedDatabase(file: string, log: Logger, now: () => number = Date.now): CheckedStore {
  try {
    return openChecked(file, log, now, false);
  } catch (err) {
    if (!isStorageFull(err)) throw isStorageFault(err) ? new StorageOpenError(file, err) : err;
    const why = describeStorageError(err, file, 'opening');
    log.error({ file }, `${why}: opening it for this process alone, with its WAL index in memory`);
    try {
      return { ...openChecked(file, log, now, true), exclusive: why };
    } catch (again) {
      throw isStorageFault(again) ? new StorageOpenError(file, again) : again;
    }
  }
}

function openChecked(file: string, log: Logger, now: () => number, exclusive: boolean): CheckedStore {
  let reason: string | null = null;
  const open = () => openDatabase(file, (fields, msg) => log.warn(fields, msg), { exclusive });
  if (existsSync(file)) {
    const started = Date.now();
    reason = quickCheck(file, exclusive);
    log.info({ ms: Date.now() - started, ok: reason === null }, 'database quick_check');
  }
  if (reason === null) {
    try {
      return { db: open(), replaced: null, exclusive: null };
    } catch (err) {
      if (!isCorruption(err)) throw err;
      reason = (err as Error).message;
    }
  }
  const at = now();
  const movedTo = moveAside(file, at);
  log.error(
    { file, movedTo, reason },
    'the database is damaged: moved aside, starting a fresh one (history before now is in the moved file)',
  );
  return { db: open(), replaced: { file, movedTo, reason, at }, exclusive: null };
}
