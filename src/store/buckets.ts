import { existsSync } from 'node:fs';
import type { Database, Statement } from 'better-sqlite3';
import { CHANNEL_TABLE, type ChannelValue } from '../core/channels.js';
import { ALL_COLUMNS, type BucketColumn } from './bucket-columns.js';
import { writeTx } from './db.js';
import { sqliteDriver } from './driver.js';
import { perConnection } from './per-connection.js';
import { foldIfDue, hasRecent, insertArchive, insertRecent, mergeByStart, recentColumns } from './recent-buckets.js';

type Channel = (typeof CHANNEL_TABLE)[number];
/** a channel's stored value: numbers, and the grid state as its text */
type Stored<C extends Channel> = (ChannelValue<C['id']> extends number ? number : string) | null;

/**
 * 15-minute bucket rows: one field per channel of the channel table (core/channels.ts), named by
 * its `field`. Values are the spec values already rounded by the writer, so a PT15M query can
 * hand them out untouched. energyIn is energy_Wh_increment at bucket end (>= 0), energyOut
 * energy_Wh_decrement (<= 0).
 */
export type BucketRow = {
  stream: number;
  /** bucket start, s since epoch (UTC, aligned to :00/:15/:30/:45) */
  startS: number;
  /** ms of the bucket covered by held samples: the weight of the power means in rollups */
  coveredMs: number;
} & { [C in Channel as C['field']]: Stored<C> };

/**
 * A row as the range query returns it: a positional tuple, because the telemetry query reads
 * tens of thousands of rows and an object per row would dominate its cost. Index it with COL.
 */
export type BucketTuple = [startS: number, coveredMs: number, ...StoredTuple<typeof CHANNEL_TABLE>];
type StoredTuple<T extends readonly Channel[]> = {
  -readonly [K in keyof T]: T[K] extends Channel ? Stored<T[K]> : never;
};
/** BucketTuple indexes by BucketRow field */
export const COL = {
  startS: 0,
  coveredMs: 1,
  ...Object.fromEntries(CHANNEL_TABLE.map((c, i) => [c.field, 2 + i])),
} as { readonly startS: 0; readonly coveredMs: 1 } & { readonly [C in Channel as C['field']]: number };

export { ALL_COLUMNS, type BucketColumn } from './bucket-columns.js';

type InsertParams = [number, number, number, ...(number | string | null)[]];

const FIELDS = CHANNEL_TABLE.map((c) => c.field);

/** Writes to the buckets table through this process's connections, counted per connection. */
const writes = new WeakMap<Database, number>();

/**
 * Changes whenever a bucket is written through `db`: an answer read from the buckets while it had
 * one value is still the answer while it has it. Only this module writes buckets, and the daemon
 * is the only process that writes its database, so nothing changes the table unseen. A write
 * that rolls back still counts: a needless miss, never a stale answer.
 */
export function bucketsGeneration(db: Database): number {
  return writes.get(db) ?? 0;
}

/**
 * Per stream: the newest bucket start written (s) and how often a bucket below it was written.
 * Buckets are closed in time order, so everything before a stream's newest bucket is final
 * unless a write goes below it (a back-fill, a re-close after restart) or retention rolls it up;
 * what was made from the final part (src/telemetry/answer-parts.ts) is kept while both counts
 * stand still.
 */
interface StreamTop {
  top: number;
  rewrites: number;
}
const tops = perConnection(() => ({ streams: new Map<number, StreamTop>(), pruned: 0 }));
const topStmt = perConnection((db) =>
  db
    .prepare<[number, number], number | null>(
      hasRecent(db)
        ? 'SELECT MAX(m) FROM (SELECT MAX(start_s) AS m FROM buckets WHERE stream = ? UNION ALL SELECT MAX(start_s) FROM buckets_recent WHERE stream = ?)'
        : 'SELECT MAX(start_s) FROM buckets WHERE stream = ? AND ? IS NOT NULL',
    )
    .pluck(),
);

function streamTop(db: Database, stream: number): StreamTop {
  const byStream = tops(db).streams;
  let t = byStream.get(stream);
  if (!t) {
    t = { top: topStmt(db).get(stream, stream) ?? Number.NEGATIVE_INFINITY, rewrites: 0 };
    byStream.set(stream, t);
  }
  return t;
}

/**
 * How far a stream's buckets are final: periods ending at or before `finalBeforeMs` will read the
 * same while `stamp` is unchanged.
 */
export function bucketsFinal(db: Database, stream: number): { finalBeforeMs: number; stamp: string } {
  const t = streamTop(db, stream);
  return { finalBeforeMs: t.top * 1000, stamp: `${t.rewrites}/${tops(db).pruned}` };
}

/** Buckets were rolled up or deleted (src/store/retention.ts): every answer made before is void. */
export function bucketsPruned(db: Database): void {
  writes.set(db, bucketsGeneration(db) + 1);
  tops(db).pruned++;
}

export function insertBucket(db: Database, b: BucketRow): void {
  writes.set(db, bucketsGeneration(db) + 1);
  const t = streamTop(db, b.stream);
  // the newest written again counts too: its first write may have rolled back (a full disk)
  if (b.startS <= t.top) t.rewrites++;
  else t.top = b.startS;
  // a file of the layout before has the archive alone
  if (hasRecent(db)) insertRecent(db, bucketParams(b));
  else insertArchive(db, bucketParams(b));
}

/**
 * After a close's transaction (up to `closedUntilS`, s): once a day, the recent rows are folded
 * into the archive (store/recent-buckets.ts). Returns the rows moved. A failure (a full disk)
 * leaves them where they are, to be folded after a later close.
 */
export function foldBuckets(db: Database, closedUntilS: number): number {
  return hasRecent(db) ? foldIfDue(db, closedUntilS) : 0;
}

/** A row's values in the order of `(stream, start_s, ...ALL_COLUMNS)`. */
export function bucketParams(b: BucketRow): InsertParams {
  return [b.stream, b.startS, b.coveredMs, ...FIELDS.map((f) => b[f])];
}

/** Several rows in one transaction (joins the caller's transaction when there is one). */
export function insertBuckets(db: Database, rows: readonly BucketRow[]): void {
  writeTx(db, () => {
    for (const r of rows) insertBucket(db, r);
  });
}

/** `[start_s, ...the asked columns in the asked order]` */
export type PartialBucket = [startS: number, ...values: (number | string | null)[]];

/** Rows of one stream whose start lies in [fromS, toS), ascending by start. */
export function bucketRange(db: Database, stream: number, fromS: number, toS: number): BucketTuple[] {
  return bucketColumns(db, stream, fromS, toS, ALL_COLUMNS) as BucketTuple[];
}

type Range = Statement<[number, number, number], PartialBucket>;
/** one statement per table and column list a caller asks for: a handful (stream shapes × PT15M or rollup) */
const ranges = perConnection(() => new Map<string, Range>());

function rangeStmt(db: Database, table: 'buckets' | 'buckets_hour', columns: readonly BucketColumn[]): Range {
  const byColumns = ranges(db);
  const key = `${table}:${columns.join(',')}`;
  let st = byColumns.get(key);
  if (!st) {
    // the names come from the BucketColumn union and the table from the two above, never from a request
    const list = ['start_s', ...columns].join(', ');
    st = db
      .prepare<[number, number, number], PartialBucket>(
        `SELECT ${list} FROM ${table} WHERE stream = ? AND start_s >= ? AND start_s < ? ORDER BY start_s`,
      )
      .raw();
    byColumns.set(key, st);
  }
  return st;
}

/**
 * bucketRange reading only some columns. Every value handed to JavaScript costs time, NULL or
 * not, and most streams fill half of the columns or fewer (a meter has no soc, soh or AC/DC
 * split): a day of a meter's ten columns took about 1.3–1.4× as long as the five it fills. A
 * caller that knows what it needs asks for that alone.
 */
export function bucketColumns(
  db: Database,
  stream: number,
  fromS: number,
  toS: number,
  columns: readonly BucketColumn[],
  /** retention's hour rows have the same columns (src/store/retention.ts) */
  table: 'buckets' | 'buckets_hour' = 'buckets',
): PartialBucket[] {
  const rows = rangeStmt(db, table, columns).all(stream, fromS, toS);
  if (table === 'buckets_hour' || !hasRecent(db)) return rows;
  return mergeByStart(rows, recentColumns(db, stream, fromS, toS, columns));
}

/**
 * The end of the newest stored bucket in a gateway database file, ms; null when the file or its
 * buckets are not there. Read-only and before the daemon opens it: `sitegw demo --speed` starts
 * its simulated clock there, so a restarted demo continues its own history instead of going
 * back to the real now.
 */
export function newestBucketEnd(file: string): number | null {
  if (!existsSync(file)) return null;
  const db = new (sqliteDriver())(file, { readonly: true, fileMustExist: true });
  try {
    const has = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'buckets'").get();
    if (!has) return null;
    const s = db
      .prepare(
        hasRecent(db)
          ? 'SELECT MAX(m) FROM (SELECT MAX(start_s) AS m FROM buckets UNION ALL SELECT MAX(start_s) FROM buckets_recent)'
          : 'SELECT MAX(start_s) FROM buckets',
      )
      .pluck()
      .get() as number | null;
    return s === null ? null : (s + 15 * 60) * 1000;
  } finally {
    db.close();
  }
}
