/**
 * Telling a storage fault (a full disk, a read-only or failing data filesystem) from every other
 * error, so the daemon keeps serving through one (docs/design.md "Field faults: what the numbers survive", disk row), and
 * a write probe for health. SQLite's extended result codes:
 * https://sqlite.org/rescode.html
 */
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { type ApiError, apiError } from '../core/errors.js';

const FULL = new Set(['SQLITE_FULL', 'SQLITE_IOERR_SHMSIZE', 'ENOSPC']);

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** The filesystem has no room: SQLITE_FULL, or the -shm index could not grow (a start on a full disk). */
export function isStorageFull(err: unknown): boolean {
  return FULL.has(codeOf(err));
}

/** Any fault of the storage itself, as opposed to a bug or bad data: full, read-only, I/O errors. */
export function isStorageFault(err: unknown): boolean {
  const c = codeOf(err);
  return (
    isStorageFull(err) ||
    c.startsWith('SQLITE_IOERR') ||
    c.startsWith('SQLITE_READONLY') ||
    c.startsWith('SQLITE_CANTOPEN') ||
    c === 'EROFS' ||
    c === 'EIO' ||
    c === 'EACCES'
  );
}

/**
 * What a client that asked for a change is answered when the disk refused it (HTTP's 503, the
 * uplink's plan response, Home Assistant's refusal): the named STORAGE_UNAVAILABLE, never an
 * internal error; undefined for any other error.
 */
export function storageRefusal(err: unknown): ApiError | undefined {
  if (!isStorageFault(err)) return undefined;
  return apiError(
    'STORAGE_UNAVAILABLE',
    "the gateway's data disk takes no writes now (full or failing), so this change was not made; reads still work, try again later",
    60,
  );
}

/**
 * A real write, as small as SQLite has: the schema version written back unchanged (one page
 * through the WAL). Health runs it only while the disk is short of room or the last write failed,
 * so the SD card pays nothing for it in the steady state.
 */
export function probeWrite(db: Database): void {
  const v = db.pragma('user_version', { simple: true }) as number;
  db.pragma(`user_version = ${v}`);
}

/**
 * One kind of write that waits in memory while the data disk refuses it and is tried again until
 * it takes it (grid events, control's write records, learned facts, stream keys). The first
 * refusal is logged at error and the first success after it at info, not every retry; `outcome`
 * hears each try (health). Any error that is not a storage fault is thrown: a bug, not a disk.
 */
export class RetriedWrite {
  private refused = false;

  constructor(
    private readonly o: {
      log?: Logger;
      /** what the log lines carry besides the error */
      context?: Record<string, unknown>;
      refused: string;
      again: string;
      outcome?: (err?: unknown) => void;
    },
  ) {}

  /** true once `write` is on disk; false when a storage fault refused it */
  attempt(write: () => void): boolean {
    try {
      write();
    } catch (err) {
      if (!isStorageFault(err)) throw err;
      this.o.outcome?.(err);
      if (!this.refused) this.o.log?.error({ err, ...this.o.context }, this.o.refused);
      this.refused = true;
      return false;
    }
    this.o.outcome?.();
    if (this.refused) this.o.log?.info({ ...this.o.context }, this.o.again);
    this.refused = false;
    return true;
  }
}
