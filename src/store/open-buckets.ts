import type { Database } from 'better-sqlite3';
import { writeTx } from './db.js';
import { isStorageFault } from './storage-faults.js';

/**
 * The running sums of each stream's bucket in progress, saved at a clean stop (a config change
 * is applied by restarting) and taken back once at the next start. Stored as JSON: the shape is
 * the bucketer's own and never queried.
 */
export function saveOpenBuckets(db: Database, states: ReadonlyMap<number, unknown>): void {
  db.prepare('DELETE FROM open_buckets').run();
  const put = db.prepare('INSERT INTO open_buckets (stream, state) VALUES (?, ?)');
  for (const [stream, state] of states) put.run(stream, JSON.stringify(state));
}

/**
 * Reads and removes every saved bucket in progress. On a disk that takes no writes (a start on a
 * full disk) they are only read: the start goes on, and the next clean stop replaces them.
 */
export function takeOpenBuckets(db: Database): Map<number, unknown> {
  try {
    return writeTx(db, () => {
      const out = readOpenBuckets(db);
      db.prepare('DELETE FROM open_buckets').run();
      return out;
    });
  } catch (err) {
    if (!isStorageFault(err)) throw err;
    return readOpenBuckets(db);
  }
}

function readOpenBuckets(db: Database): Map<number, unknown> {
  const rows = db.prepare('SELECT stream, state FROM open_buckets').raw().all() as [number, string][];
  const out = new Map<number, unknown>();
  for (const [stream, state] of rows) {
    try {
      out.set(stream, JSON.parse(state));
    } catch {
      // an unreadable row costs only the part of one bucket before the restart
    }
  }
  return out;
}
