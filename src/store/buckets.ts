import type { Database, Statement } from 'better-sqlite3';

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
  range: Statement<[number, number, number], BucketTuple>;
}
const cache = new WeakMap<Database, Stmts>();

function stmts(db: Database): Stmts {
  let s = cache.get(db);
  if (!s) {
    s = {
      // A bucket written twice (a re-close after restart) replaces itself: one row per key.
      insert: db.prepare<InsertParams>(
        `INSERT OR REPLACE INTO buckets
           (stream, start_s, covered_ms, power_W, power_AC_W, power_DC_W, soc, soh, energy_in, energy_out, state)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      range: db
        .prepare<[number, number, number], BucketTuple>(
          `SELECT start_s, covered_ms, power_W, power_AC_W, power_DC_W, soc, soh, energy_in, energy_out, state
             FROM buckets WHERE stream = ? AND start_s >= ? AND start_s < ? ORDER BY start_s`,
        )
        .raw(),
    };
    cache.set(db, s);
  }
  return s;
}

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

/** Rows of one stream whose start lies in [fromS, toS), ascending by start. */
export function bucketRange(db: Database, stream: number, fromS: number, toS: number): BucketTuple[] {
  return stmts(db).range.all(stream, fromS, toS);
}
