/**
 * The data filesystem, watched once a poll period (docs/design.md "Field faults: what the numbers survive", disk row): its
 * free space, and while that is short or the last write failed, a real write (store/
 * storage-faults.ts probeWrite). Health hears the outcome, so a full disk shows within one poll
 * and clears with the first write that works; what waited in memory (tokens) is written then.
 * Errors name the path and the errno: SQLite's own words ("disk I/O error", "unable to open
 * database file") say neither.
 */
import { closeSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { isStorageFault, probeWrite } from '../store/storage-faults.js';
import { repairVanishedWal } from '../store/wal.js';

/** Below this much free space the disk counts as full: health fails without waiting for a write to. */
export const FULL_BYTES = 256 * 1024;

/** Free bytes for this user on the filesystem holding `dir`, or null where statfs fails. */
export function freeBytes(dir: string): number | null {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}

/** The errno of writing a byte to a new file in `dir` (ENOSPC, EROFS, EACCES, EIO), or null when that works. */
export function dirWriteErrno(dir: string): string | null {
  const f = join(dir, `.sitegw-write-check-${process.pid}`);
  let fd: number | null = null;
  try {
    fd = openSync(f, 'w', 0o600);
    writeSync(fd, 'x');
    return null;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err);
  } finally {
    if (fd !== null) closeSync(fd);
    rmSync(f, { force: true });
  }
}

/** One sentence for a failed database write or open: what, where, SQLite's code, the errno and the free space. */
export function describeStorageError(err: unknown, file: string, what = 'writing'): string {
  const dir = dirname(file);
  const code = (err as { code?: unknown }).code;
  const msg = err instanceof Error ? err.message : String(err);
  const errno = dirWriteErrno(dir);
  const free = freeBytes(dir);
  const parts = [`${what} ${file} failed: ${typeof code === 'string' ? `${code} (${msg})` : msg}`];
  if (errno) parts.push(`writing to ${dir} fails with ${errno}${ERRNO_WORDS[errno] ? ` (${ERRNO_WORDS[errno]})` : ''}`);
  if (free !== null) parts.push(`${free} bytes free there`);
  return parts.join('; ');
}

const ERRNO_WORDS: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only filesystem',
  EACCES: 'permission denied: the sitegw user cannot write there',
  EIO: 'input/output error: the card or disk is failing',
  EDQUOT: 'disk quota exceeded',
};

export interface StorageWatchOptions {
  db: Database;
  dbFile: string;
  log: Logger;
  /** the outcome of a write: Health.noteWrite */
  noteWrite: (err?: unknown, described?: string) => void;
  /** whether the last write anyone made failed */
  failing: () => boolean;
  /** whether something waits in memory for the disk (tokens) */
  pending?: () => boolean;
  /** runs when a write works and something waits: it is written */
  onWritable?: () => void;
  /** check period, real ms (the poll period) */
  everyMs: number;
  /** a WAL removed while running and repaired: health's note */
  onWalRemoved?: (file: string) => void;
}

export class StorageWatch {
  private timer: NodeJS.Timeout | null = null;
  private wasFailing = false;

  constructor(private readonly o: StorageWatchOptions) {}

  start(): void {
    this.timer ??= setInterval(() => this.check(), this.o.everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One look: a vanished WAL repaired; probe when room is short or the last write failed, tell health, flush what waited. */
  check(): void {
    const { db, dbFile, log, noteWrite, failing } = this.o;
    for (const w of repairVanishedWal(db)) {
      if (w.repaired) {
        log.error(
          { file: w.file },
          'the WAL was removed while running: checkpointed into the database and started anew',
        );
        this.o.onWalRemoved?.(w.file);
        continue;
      }
      // failing until a later look repairs it: a probe's write would go into the nameless file
      const why = `${w.file} was removed while running and another process holds the database, so it is not repaired yet: stop that process (sitegw clients, backup) or restart sitegw`;
      if (!this.wasFailing) log.error({ file: w.file }, why);
      this.wasFailing = true;
      noteWrite(Object.assign(new Error('WAL removed'), { code: 'SQLITE_IOERR' }), why);
      return;
    }
    const free = freeBytes(dirname(dbFile));
    const pending = this.o.pending?.() ?? false;
    try {
      // a full disk fails health at once: the next write (a token, a bucket) would fail, and SQLite
      // reusing its WAL's own room can hide that from a probe for a while
      if (free !== null && free < FULL_BYTES)
        throw Object.assign(new Error('no space left on the device'), { code: 'ENOSPC' });
      // a real write only while one failed or something waits: the SD card pays nothing otherwise
      if (!failing() && !this.wasFailing && !pending) return;
      probeWrite(db);
    } catch (err) {
      if (!isStorageFault(err)) log.error({ err }, 'the storage write probe failed');
      const described = describeStorageError(err, dbFile);
      if (!this.wasFailing) log.error({ file: dbFile, free }, described);
      this.wasFailing = true;
      noteWrite(err, described);
      return;
    }
    if (this.wasFailing || failing()) {
      log.info({ file: dbFile, free }, 'writing to the database works again');
      noteWrite();
      this.wasFailing = false;
    }
    if (!pending) return;
    try {
      this.o.onWritable?.();
    } catch (err) {
      log.error({ err }, 'writing what waited in memory failed; tried again at the next check');
    }
  }
}
