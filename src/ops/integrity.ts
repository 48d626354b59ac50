/**
 * Opening the store with an integrity check first. A database file that SQLite finds damaged
 * (PRAGMA quick_check, or SQLITE_CORRUPT / SQLITE_NOTADB while opening; sitegw.db and
 * credentials.db each) is moved aside with a timestamp, a fresh one is started, every readable
 * row of every table is salvaged into it (store/salvage.ts) and what the salvage lacks is filled
 * from the scheduled backup (ops/backup.ts), before anything else runs. A damaged file on an SD
 * card costs what was unreadable and not in the backup, and never turns the service into a crash
 * loop. Anything else (permissions, a full disk, a file from a newer sitegw) is not corruption.
 *
 * quick_check (https://sqlite.org/pragma.html#pragma_quick_check) reads every page but skips the
 * index-content cross-check of integrity_check, which keeps the start fast on a Pi.
 */
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { clientRows, credentialsFileOf } from '../store/credentials.js';
import { CACHE_KIB, openDatabase } from '../store/db.js';
import { sqliteDriver } from '../store/driver.js';
import { openReadOnlyStore, removeDeadCopies } from '../store/read-only.js';
import {
  type Filled,
  fillFromBackups,
  RESTORABLE_CREDENTIALS,
  salvageInto,
  type TableSalvage,
} from '../store/salvage.js';
import { isStorageFault, isStorageFull } from '../store/storage-faults.js';
import { describeStorageError, dirWriteErrno } from './data-disk.js';

/** What happened to a damaged database at start. */
export interface DatabaseReplaced {
  file: string;
  /** where the damaged file (and its -wal/-shm) went */
  movedTo: string;
  /** SQLite's words */
  reason: string;
  at: number;
  /** every damaged file and where it went (sitegw.db, credentials.db) */
  files: { file: string; movedTo: string; reason: string }[];
  /** what each table gave to the fresh file */
  salvaged: TableSalvage[];
  /** what the backups added that the salvage lacked */
  restored: Filled[];
}

export interface CheckedStore {
  db: Database;
  replaced: DatabaseReplaced | null;
  /** why the database is open for this process alone (a start on a full disk), or null */
  exclusive: string | null;
  /** why the database is open for reading only (a read-only data directory), or null */
  readOnly?: string | null;
  /** what the store's stop must do after the database closed (a read-only copy removed) */
  cleanup?: () => void;
  /** credentials.db was missing beside an existing database: what the backups gave back (health says it) */
  credentialsLost?: string | null;
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
 * Opens (and migrates) the database at `file`, salvaging it when it is damaged. On a full disk it
 * opens it for this process alone, in a directory that takes no writes for reading only
 * (docs/design.md "Field faults: what the numbers survive": a start on either serves); any other
 * fault of the storage stops the start with the path, SQLite's code and the errno.
 */
export function openCheckedDatabase(file: string, log: Logger, now: () => number = Date.now): CheckedStore {
  const left = removeDeadCopies();
  if (left.length > 0)
    log.warn({ removed: left }, 'removed the read-only copies of the database that killed daemons left');
  try {
    return openChecked(file, log, now, false);
  } catch (err) {
    if (
      !isStorageFull(err) &&
      isStorageFault(err) &&
      existsSync(file) &&
      READ_ONLY.has(dirWriteErrno(dirname(file)) ?? '')
    )
      return openReadOnlyChecked(file, log, err);
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

/** a directory that refuses every write, as opposed to one that is full */
const READ_ONLY = new Set(['EROFS', 'EACCES', 'EPERM']);

/** A data directory that takes no writes: the database opened for reading, so the gateway serves (finding 4). */
function openReadOnlyChecked(file: string, log: Logger, cause: unknown): CheckedStore {
  const why = `${describeStorageError(cause, file, 'opening')}: serving read-only (sign-in for known clients, the stored data); nothing new is stored until the directory is writable and sitegw restarted`;
  try {
    const ro = openReadOnlyStore(file);
    log.error({ file, copiedTo: ro.copiedTo }, why);
    return { db: ro.db, replaced: null, exclusive: null, readOnly: why, cleanup: ro.cleanup };
  } catch (again) {
    throw isStorageFault(again) ? new StorageOpenError(file, again) : again;
  }
}

function openChecked(file: string, log: Logger, now: () => number, exclusive: boolean): CheckedStore {
  const damaged: { file: string; reason: string }[] = [];
  for (const f of [file, credentialsFileOf(file)]) {
    if (!existsSync(f)) continue;
    const started = Date.now();
    const reason = quickCheck(f, exclusive);
    log.info({ file: f, ms: Date.now() - started, ok: reason === null }, 'database quick_check');
    if (reason !== null) damaged.push({ file: f, reason });
  }
  const open = () => openDatabase(file, (fields, msg) => log.warn(fields, msg), { exclusive });
  // a credentials file removed or lost beside a database that has been split (or is about to be)
  const credLost = existsSync(file) && !existsSync(credentialsFileOf(file));
  if (damaged.length === 0) {
    try {
      const db = open();
      return {
        db,
        replaced: null,
        exclusive: null,
        credentialsLost: credLost ? refillCredentials(db, file, log) : null,
      };
    } catch (err) {
      if (!isCorruption(err)) throw err;
      damaged.push({ file, reason: (err as Error).message });
    }
  }
  const at = now();
  const files = damaged.map((d) => ({ ...d, movedTo: moveAside(d.file, at) }));
  for (const f of files)
    log.error(
      { file: f.file, movedTo: f.movedTo, reason: f.reason },
      'the database is damaged: moved aside, salvaging every readable row into a fresh one',
    );
  const db = open();
  const salvaged = files.flatMap((f) => salvageInto(db, f.movedTo, { conflict: 'replace' }));
  const restored = fillFromBackups(db, dirname(file));
  log.warn({ salvaged, restored }, 'the damaged database was salvaged');
  const first = files[0]!;
  return {
    db,
    replaced: { file: first.file, movedTo: first.movedTo, reason: first.reason, at, files, salvaged, restored },
    exclusive: null,
  };
}

/**
 * Fills a fresh credentials file from the backups. Null where nothing was missing: a database of
 * the layout before the credentials file carried its own, copied over at this open.
 */
function refillCredentials(db: Database, file: string, log: Logger): string | null {
  const filled = fillFromBackups(db, dirname(file), RESTORABLE_CREDENTIALS).filter((f) => f.rows > 0);
  const clients = clientRows(db);
  if (filled.length === 0 && clients > 0) return null;
  const what =
    filled.length > 0
      ? `restored from the backups: ${filled.map((f) => `${f.table}: ${f.rows} rows from ${f.backup}`).join(', ')}`
      : 'no backup held credentials: add the clients again (sitegw clients add) and set the owner password';
  const sentence = `${credentialsFileOf(file)} was missing at start: ${what}`;
  log.error({ file: credentialsFileOf(file) }, sentence);
  return sentence;
}

/** One sentence for health: what the salvage kept and what was lost, table by table. */
export function describeReplaced(r: DatabaseReplaced): string {
  const where = r.files.map((f) => `${basename(f.file)} (${f.reason}) was moved to ${f.movedTo}`).join('; ');
  const kept = r.salvaged.filter((t) => t.rows > 0).map((t) => `${t.table}: ${t.rows} rows`);
  const lost = r.salvaged
    .filter((t) => t.unreadable)
    .map((t) => `${t.table}${t.refused > 0 ? ` (${t.refused} rows refused)` : ''}`);
  const filled = r.restored.filter((f) => f.rows > 0).map((f) => `${f.table}: ${f.rows} rows from ${f.backup}`);
  return (
    `the database was damaged at start: ${where}; salvaged into a fresh file: ${kept.join(', ') || 'nothing'}` +
    (lost.length > 0 ? `; unreadable parts lost in ${lost.join(', ')}` : '; nothing unreadable') +
    (filled.length > 0 ? `; restored from the backups: ${filled.join(', ')}` : '')
  );
}
