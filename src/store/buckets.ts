import type { Database, Statement } from 'better-sqlite3';
import { perConnection } from './per-connection.js';

/**
 * 15-minute bucket rows. Values are the spec values already rounded by the writer, so a PT15M
 * query can hand them out untouched.
 */
export interface BucketRow {
  stream: number;
  /** bucket start, s since epoch (UTC, aligned to :00/:15/:30/:45) */
  startS: number;
  /** ms of the bucket covered by held samples: the weight of the power means in rollups */
  coveredMs: number;
  power_W: number | null;
  power_AC_W: number | null;
  power_DC_W: number | null;
  soc: number | null;
  soh: number | null;
  /** energy_Wh_increment at bucket end (>= 0) */
  energyIn: number | null;
  /** energy_Wh_decrement at bucket end (<= 0) */
  energyOut: number | null;
  state: string | null;
}

/**
 * A row as the range query returns it: a positional tuple, because the telemetry query reads
 * tens of thousands of rows and an object per row would dominate its cost. Use the COL_* indexes.
 */
export type BucketTuple = [
  startS: number,
  coveredMs: number,
  power_W: number | null,
  power_AC_W: number | null,
  power_DC_W: number | null,
  soc: number | null,
  soh: number | null,
  energyIn: number | null,
  energyOut: number | null,
  state: string | null,
];
export const COL = {
  startS: 0,
  coveredMs: 1,
  power_W: 2,
  power_AC_W: 3,
  power_DC_W: 4,
  soc: 5,
  soh: 6,
  energyIn: 7,
  energyOut: 8,
  state: 9,
} as const;

type InsertParams = [number, number, number, ...(number | string | null)[]];
interface Stmts {
  insert: Statement<InsertParams>;
}
const stmts = perConnection((db): Stmts => ({
  // A bucket written twice (a re-close after restart) replaces itself: one row per key.
  insert: db.prepare<InsertParams>(
    `INSERT OR REPLACE INTO buckets
       (stream, start_s, covered_ms, power_W, power_AC_W, power_DC_W, soc, soh, energy_in, energy_out, state)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ),
}));

export function insertBucket(db: Database, b: BucketRow): void {
  stmts(db).insert.run(
    b.stream,
    b.startS,
    b.coveredMs,
    b.power_W,
    b.power_AC_W,
    b.power_DC_W,
    b.soc,
    b.soh,
    b.energyIn,
    b.energyOut,
    b.state,
  );
}

/** Several rows in one transaction (joins the caller's transaction when there is one). */
export function insertBuckets(db: Database, rows: readonly BucketRow[]): void {
  db.transaction(() => {
    for (const r of rows) insertBucket(db, r);
  })();
}

/** A stored column besides start_s, by its name in the table. */
export type BucketColumn = 'covered_ms' | 'power_W' | 'power_AC_W' | 'power_DC_W' | 'soc' | 'soh' | 'energy_in' | 'energy_out' | 'state';
/** `[start_s, ...the asked columns in the asked order]` */
export type PartialBucket = [startS: number, ...values: (number | string | null)[]];

/** every column after start_s, in BucketTuple order */
const ALL_COLUMNS: readonly BucketColumn[] = ['covered_ms', 'power_W', 'power_AC_W', 'power_DC_W', 'soc', 'soh', 'energy_in', 'energy_out', 'state'];

/** Rows of one stream whose start lies in [fromS, toS), ascending by start. */
export function bucketRange(db: Database, stream: number, fromS: number, toS: number): BucketTuple[] {
  return bucketColumns(db, stream, fromS, toS, ALL_COLUMNS) as BucketTuple[];
}

/** one statement per column list a caller asks for: a handful (stream shapes × PT15M or rollup) */
const ranges = perConnection(() => new Map<string, Statement<[number, number, number], PartialBucket>>());

/**
 * bucketRange reading only some columns. Every value handed to JavaScript costs time, NULL or
 * not, and most streams fill half of the columns or fewer (a meter has no soc, soh or AC/DC
 * split): a day of a meter's ten columns took about 1.3–1.4× as long as the five it fills. A
 * caller that knows what it needs asks for that alone.
 */
export function bucketColumns(db: Database, stream: number, fromS: number, toS: number, columns: readonly BucketColumn[]): PartialBucket[] {
  const byColumns = ranges(db);
  const key = columns.join(',');
  let st = byColumns.get(key);
  if (!st) {
    // the names come from the BucketColumn union, never from a request
    const list = ['start_s', ...columns].join(', ');
    st = db.prepare<[number, number, number], PartialBucket>(`SELECT ${list} FROM buckets WHERE stream = ? AND start_s >= ? AND start_s < ? ORDER BY start_s`).raw();
    byColumns.set(key, st);
  }
  return st.all(stream, fromS, toS);
}
