import type { Database, Statement } from 'better-sqlite3';
import { ALL_COLUMNS, type BucketColumn } from './bucket-columns.js';
import { writeTx } from './db.js';
import { countDrops } from './outbox.js';
import { perConnection } from './per-connection.js';
import { recentKey, STREAM_SPAN } from './recent-key.js';
import { raiseOutboxSeq } from './seq-ceiling.js';
import { firstPendingStart, hasTelemetrySeq, saveSentSeq, telemetryBefore } from './uplink-telemetry.js';

/**
 * The buckets' two tables (docs/design.md "Storage: where the buckets are"). A close writes its
 * rows into `buckets_recent`, a rowid table keyed by k = start_s × 2^20 + stream: every stream's
 * row of one quarter hour lands at the end of the B-tree on the same page or two, whatever the
 * number of streams (an integer key appended at the end splits no page but the last; a WITHOUT
 * ROWID table keyed (start_s, stream) wrote twice as much: bench/bucket-layout-writes.ts).
 * `buckets`, keyed by (stream, start_s), is the archive a stream's day or years are read from in
 * one range. Once the recent rows span a day the next close folds them into the archive, a
 * stream's day at a time: a few pages per stream a day, where writing them there at each close
 * cost a page per stream per close (bench/README.md "SQLite writes a day").
 *
 * A bucket is in one table or, briefly, in both (a bucket written again after its day was folded:
 * a re-close after restart, a back-fill): then the recent row is the newer and wins, in reads and
 * at the next fold (INSERT OR REPLACE). No watermark is kept, so a salvaged or restored file, whose
 * rows may come from either table of either age, reads right as it is.
 */

/** the recent rows are folded once they span this (s): one fold a day */
export const FOLD_SPAN_S = 86_400;
export { STREAM_SPAN } from './recent-key.js';

/**
 * Whether the file has the recent table: a database of the layout before (schema 16 and older) has
 * the archive alone, and a read-only start serves it without migrating (store/read-only.ts).
 * Checked once per connection.
 */
export const hasRecent = perConnection(
  (db): boolean =>
    db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'buckets_recent'").get() !== undefined,
);

const cols = ALL_COLUMNS.join(', ');
const marks = ALL_COLUMNS.map(() => '?').join(', ');
type Params = [number, number, number, ...(number | string | null)[]];
const stmts = perConnection((db) => ({
  // the column names come from the channel table, never from input; a bucket written twice (a
  // re-close after restart) replaces itself: one row per key
  insert: db.prepare<[number, ...Params]>(
    `INSERT OR REPLACE INTO buckets_recent (k, stream, start_s, ${cols}) VALUES (?, ?, ?, ${marks})`,
  ),
  oldest: db.prepare<[], number | null>('SELECT start_s FROM buckets_recent ORDER BY k LIMIT 1').pluck(),
  toFold: db
    .prepare<[number], Params>(`SELECT stream, start_s, ${cols} FROM buckets_recent WHERE k < ? ORDER BY k`)
    .raw(),
  drop: db.prepare<[number]>('DELETE FROM buckets_recent WHERE k < ?'),
  ranges: new Map<string, Statement<[number, number, number], [number, ...unknown[]]>>(),
}));

// apart from the recent table's statements: a file of the layout before has the archive alone
const archive = perConnection((db) =>
  db.prepare<Params>(`INSERT OR REPLACE INTO buckets (stream, start_s, ${cols}) VALUES (?, ?, ${marks})`),
);

/** Writes a bucket's row, `(stream, start_s, ...ALL_COLUMNS)`, into the archive (a file of the layout before). */
export function insertArchive(db: Database, params: Params): void {
  archive(db).run(...params);
}

/** Writes a bucket's row, `(stream, start_s, ...ALL_COLUMNS)`, into the recent table. */
export function insertRecent(db: Database, params: Params): void {
  stmts(db).insert.run(recentKey(params[1], params[0]), ...params);
}

/** A stream's recent rows starting in [fromS, toS): `[start_s, ...columns]`, ascending. */
export function recentColumns<T extends [number, ...unknown[]]>(
  db: Database,
  stream: number,
  fromS: number,
  toS: number,
  columns: readonly BucketColumn[],
): T[] {
  const s = stmts(db);
  const key = columns.join(',');
  let st = s.ranges.get(key);
  if (!st) {
    // the range of k holds every stream's rows of those quarter hours: the few there are read and the stream's kept
    st = db
      .prepare<[number, number, number], [number, ...unknown[]]>(
        `SELECT ${['start_s', ...columns].join(', ')} FROM buckets_recent WHERE k >= ? AND k < ? AND stream = ? ORDER BY k`,
      )
      .raw();
    s.ranges.set(key, st);
  }
  return st.all(fromS * STREAM_SPAN, toS * STREAM_SPAN, stream) as T[];
}

/** the oldest recent start per connection; undefined: read it again */
const oldestCache = new WeakMap<Database, number>();

/**
 * After a close up to `closedUntilS`, outside its transaction: folds every recent row into the
 * archive once they span FOLD_SPAN_S. Returns the rows moved.
 */
export function foldIfDue(db: Database, closedUntilS: number): number {
  let oldest = oldestCache.get(db);
  if (oldest === undefined) {
    const first = stmts(db).oldest.get();
    // an empty table is read again at the next close, which may have written its first rows
    if (first === null || first === undefined) return 0;
    oldest = first;
    oldestCache.set(db, oldest);
  }
  if (closedUntilS - oldest < FOLD_SPAN_S) return 0;
  // held by unacknowledged telemetry: tried again once more of it is acknowledged, or an hour on
  // (for the age bound), not at every close
  const hold = holds.get(db);
  const held = heldAt.get(db);
  const through = hold?.through();
  if (held && held.through === through && closedUntilS - held.atS < 3600) return 0;
  const moved = foldBefore(db, closedUntilS);
  if (hold && through !== undefined) heldAt.set(db, { through, atS: closedUntilS });
  return moved;
}

/**
 * What keeps the fold from moving telemetry the broker has not acknowledged (the archive has no
 * seq: docs/uplink.md "The outbox and the SD card"), while an uplink runs: `through` is its
 * in-memory ack position, saved durably in the fold's transaction; rows older than `maxAgeMs`
 * (the outbox's maxAgeDays) are folded all the same, counted as dropped by age.
 */
export interface FoldHold {
  through(): number;
  now(): number;
  maxAgeMs: number;
}
const holds = new WeakMap<Database, FoldHold>();
const heldAt = new WeakMap<Database, { through: number; atS: number }>();

/** The uplink's hold on the fold (null: none, as for a site without an uplink, which folds everything). */
export function holdFold(db: Database, hold: FoldHold | null): void {
  if (hold) holds.set(db, hold);
  else holds.delete(db);
  heldAt.delete(db);
}

/**
 * Inside the fold's transaction: where it may cut, and the seq counter raised to the highest
 * telemetry seq leaving the recent rows, so no seq is handed out twice once they are gone.
 */
function telemetryCut(db: Database, beforeS: number): number {
  if (!hasTelemetrySeq(db)) return beforeS;
  const hold = holds.get(db);
  let cut = beforeS;
  let sent = 0;
  if (hold) {
    saveSentSeq(db, hold.through());
    const first = firstPendingStart(db);
    const floor = Math.min(beforeS, Math.floor((hold.now() - hold.maxAgeMs) / 1000));
    if (first !== null) cut = Math.max(Math.min(beforeS, first), floor);
    sent = hold.through();
  }
  const { top, pending } = telemetryBefore(db, cut, Math.max(sent, 0));
  raiseOutboxSeq(db, top);
  if (hold && pending > 0) countDrops(db, pending, 0, hold.now());
  return cut;
}

/**
 * Moves the recent rows starting before `beforeS` into the archive, in one transaction. The rows
 * are read out and written a stream at a time, in the archive's order: each stream's pages are
 * written once, not visited once per quarter hour (which, past SQLite's page cache, would write
 * them to the WAL again), and single-row statements need no statement journal (an INSERT … SELECT
 * inside a transaction writes one to a temporary file: /var/tmp, on the card). Values are
 * unchanged: answers made before stay right. While an uplink holds the fold (holdFold), rows from
 * the first one whose telemetry is not durably acknowledged on stay.
 */
export function foldBefore(db: Database, beforeS: number): number {
  const s = stmts(db);
  try {
    return writeTx(db, () => {
      const cut = telemetryCut(db, beforeS);
      const rows = s.toFold.all(cut * STREAM_SPAN);
      const byStream = new Map<number, Params[]>();
      for (const r of rows) {
        const list = byStream.get(r[0]);
        if (list) list.push(r);
        else byStream.set(r[0], [r]);
      }
      const into = archive(db);
      for (const list of byStream.values()) for (const r of list) into.run(...r);
      s.drop.run(cut * STREAM_SPAN);
      return rows.length;
    });
  } finally {
    // read again next time: a rollback leaves the rows where they were
    oldestCache.delete(db);
  }
}

/**
 * Rows of one stream from both tables, each ascending by start (element 0): the archive's, then
 * the recent ones, a recent row replacing an archive row of the same start.
 */
export function mergeByStart<T extends readonly [number, ...unknown[]]>(archive: T[], recent: T[]): T[] {
  if (recent.length === 0) return archive;
  if (archive.length === 0) return recent;
  if (archive[archive.length - 1]![0] < recent[0]![0]) {
    for (const r of recent) archive.push(r);
    return archive;
  }
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < archive.length || j < recent.length) {
    const a = archive[i];
    const r = recent[j];
    if (r === undefined || (a !== undefined && a[0] < r[0])) {
      out.push(a!);
      i++;
    } else {
      if (a !== undefined && a[0] === r[0]) i++;
      out.push(r);
      j++;
    }
  }
  return out;
}
