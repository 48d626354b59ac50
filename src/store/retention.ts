import type { Database, Statement } from 'better-sqlite3';
import {
  ALL_COLUMNS,
  type BucketColumn,
  type BucketRow,
  type BucketTuple,
  bucketColumns,
  bucketParams,
  bucketRange,
  bucketsPruned,
  type PartialBucket,
} from './buckets.js';
import { writeTx } from './db.js';
import { bodyText } from './outbox.js';
import { perConnection } from './per-connection.js';
import { hasRecent, STREAM_SPAN } from './recent-buckets.js';
import { firstPendingStart } from './uplink-telemetry.js';

/**
 * Retention's rows (docs/configuration.md "Retention: `retention:`"): PT15M buckets older than the kept years
 * are replaced by one row per hour in `buckets_hour`, with the columns of `buckets`. PT1H and P1D
 * are rolled up from either. `retention_state.rolled_until` (s) bounds where hour rows exist, so a
 * query of recent periods never reads the hour table.
 */
const HOUR_S = 3600;

type Row = ReturnType<typeof bucketParams>;
interface Stmts {
  rolled: Statement<[], number>;
  first: Statement<[number, number], number>;
  firstRecent: Statement<[number, number], number> | null;
  insertHour: Statement<Row>;
  del: Statement<[number, number, number]>;
  delRecent: Statement<[number, number, number]> | null;
  setRolled: Statement<[number]>;
  pendingFrom: Statement<[string], string | null>;
  pendingDeflated: Statement<[string], Buffer>;
}
const cols = ALL_COLUMNS.join(', ');
const stmts = perConnection(
  (db): Stmts => ({
    rolled: db.prepare<[], number>('SELECT rolled_until FROM retention_state WHERE id = 1').pluck(),
    first: db
      .prepare<[number, number], number>(
        'SELECT start_s FROM buckets WHERE stream = ? AND start_s < ? ORDER BY start_s LIMIT 1',
      )
      .pluck(),
    // a bucket written below the archive's rows since the last fold is in the recent table
    // (store/recent-buckets.ts); a statement of its own: MIN() over a UNION ALL of the two read
    // every row of the stream below the cutoff
    firstRecent: hasRecent(db)
      ? db
          .prepare<[number, number], number>(
            `SELECT start_s FROM buckets_recent WHERE k < ? * ${STREAM_SPAN} AND stream = ? ORDER BY k LIMIT 1`,
          )
          .pluck()
      : null,
    // the column names come from the channel table, never from input
    insertHour: db.prepare<Row>(
      `INSERT OR REPLACE INTO buckets_hour (stream, start_s, ${cols}) VALUES (?, ?, ${ALL_COLUMNS.map(() => '?').join(', ')})`,
    ),
    del: db.prepare<[number, number, number]>('DELETE FROM buckets WHERE stream = ? AND start_s >= ? AND start_s < ?'),
    delRecent: hasRecent(db)
      ? db.prepare<[number, number, number]>(
          `DELETE FROM buckets_recent WHERE k >= ? * ${STREAM_SPAN} AND k < ? * ${STREAM_SPAN} AND stream = ?`,
        )
      : null,
    setRolled: db.prepare<[number]>('UPDATE retention_state SET rolled_until = MAX(rolled_until, ?) WHERE id = 1'),
    // a telemetry message's `time` is its bucket's start (src/uplink/payloads.ts)
    // a long body is a deflated BLOB (store/outbox.ts): those are read out and opened here
    pendingFrom: db
      .prepare<[string], string | null>(
        "SELECT MIN(json_extract(body, '$.time')) FROM uplink_outbox WHERE topic = ? AND typeof(body) = 'text'",
      )
      .pluck(),
    pendingDeflated: db
      .prepare<[string], Buffer>("SELECT body FROM uplink_outbox WHERE topic = ? AND typeof(body) = 'blob'")
      .pluck(),
  }),
);

/** rolled_until per connection: this process is the only writer of its database */
const rolledCache = new WeakMap<Database, number>();

/** Hour rows exist only for starts below this (s); 0 while retention has rolled nothing. */
export function rolledUntil(db: Database): number {
  let v = rolledCache.get(db);
  if (v === undefined) {
    v = stmts(db).rolled.get() ?? 0;
    rolledCache.set(db, v);
  }
  return v;
}

/** Hour rows of one stream starting in [fromS, toS), only the asked columns, ascending. */
export function hourColumns(
  db: Database,
  stream: number,
  fromS: number,
  toS: number,
  columns: readonly BucketColumn[],
): PartialBucket[] {
  return bucketColumns(db, stream, fromS, toS, columns, 'buckets_hour');
}

/** The oldest bucket start of a stream below `beforeS`, or undefined. */
export function oldestBucketBefore(db: Database, stream: number, beforeS: number): number | undefined {
  const s = stmts(db);
  const a = s.first.get(stream, beforeS) ?? undefined;
  // only a recent row older than the archive's oldest matters: a k range, empty unless a bucket
  // was written below the archive since the last fold (the recent rows of other streams in the
  // range are passed over, so the range is kept small)
  const r = s.firstRecent?.get(a ?? beforeS, stream) ?? undefined;
  return a === undefined ? r : r === undefined ? a : Math.min(a, r);
}

/** A stream's PT15M rows and its hour rows starting in [fromS, toS), each ascending. */
export function rowsToRoll(
  db: Database,
  stream: number,
  fromS: number,
  toS: number,
): { buckets: BucketTuple[]; hours: BucketTuple[] } {
  return {
    buckets: bucketRange(db, stream, fromS, toS),
    hours: bucketColumns(db, stream, fromS, toS, ALL_COLUMNS, 'buckets_hour') as BucketTuple[],
  };
}

/**
 * In one transaction: writes a stream's hour rows for [fromS, toS) (both hour-aligned) and
 * deletes its PT15M rows there, so a reader sees either the buckets or their hours, never both
 * or neither. Returns the buckets deleted.
 */
export function replaceWithHours(
  db: Database,
  stream: number,
  fromS: number,
  toS: number,
  hours: readonly BucketRow[],
): number {
  if (fromS % HOUR_S !== 0 || toS % HOUR_S !== 0) throw new RangeError('retention ranges are whole hours');
  const s = stmts(db);
  const deleted = writeTx(db, () => {
    for (const h of hours) s.insertHour.run(...bucketParams(h));
    const n = s.del.run(stream, fromS, toS).changes + (s.delRecent?.run(fromS, toS, stream).changes ?? 0);
    s.setRolled.run(toS);
    return n;
  });
  rolledCache.set(db, Math.max(rolledUntil(db), toS));
  bucketsPruned(db);
  return deleted;
}

/**
 * The oldest bucket start (ms) a telemetry message still waiting carries, in the uplink's outbox
 * or in the buckets not durably acknowledged, or null when none waits: retention keeps
 * everything from there on.
 */
export function oldestPendingUplink(db: Database, topic: string): number | null {
  const s = stmts(db);
  let t = s.pendingFrom.get(topic) ?? null;
  for (const b of s.pendingDeflated.iterate(topic)) {
    const time = (JSON.parse(bodyText(b)) as { time?: unknown }).time;
    if (typeof time === 'string' && (t === null || time < t)) t = time;
  }
  // and telemetry pending in the buckets themselves (store/uplink-telemetry.ts): its rows' start
  const inBuckets = firstPendingStart(db);
  const starts = [t === null ? Number.NaN : Date.parse(t), inBuckets === null ? Number.NaN : inBuckets * 1000];
  const known = starts.filter(Number.isFinite);
  return known.length === 0 ? null : Math.min(...known);
}
