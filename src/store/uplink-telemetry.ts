import type { Database, Statement } from 'better-sqlite3';
import { ALL_COLUMNS } from './bucket-columns.js';
import { writeTx } from './db.js';
import { perConnection } from './per-connection.js';
import { STREAM_SPAN } from './recent-key.js';

/**
 * The uplink's telemetry, kept in the buckets themselves (schema 19, docs/uplink.md "The outbox
 * and the SD card"): a close stamps its recent rows with the seq of the message they go out in and when that was
 * (`written`), on the page the close has just written, instead of copying a 3 kB message into the
 * outbox (three more pages a close: the row, the AUTOINCREMENT counter's page, the row's page
 * again at its delete). `uplink_sent.seq` is the durable ack position: every telemetry seq at or
 * below it was acknowledged by the broker. A row with a seq above it is pending.
 *
 * Only a message's last row (by k) carries its seq and `written`; the rows below it in the same
 * quarter hour carry MEMBER, which takes no byte more than NULL. Twelve bytes on each of a close's
 * rows split its last page among its neighbours (a close's rows no longer fit twice in a page at
 * the home site: 0.3 MB a day, bench/disk-writes.ts); on its last row they grow the table's last
 * cell, which SQLite moves to a page of its own as it does an append. A quarter hour written by
 * two closes (a re-close, a back-fill) has every row stamped with its seq instead (stampTelemetry).
 */

/** A row of the message whose seq the next row above it in the same quarter hour carries. */
export const MEMBER = 1;

/** A pending message's rows: `[streamKey, start_s, ...ALL_COLUMNS]` in stream key order. */
export type TelemetryRow = [string, number, ...(number | string | null)[]];
export interface PendingTelemetry {
  seq: number;
  written: number;
  rows: TelemetryRow[];
}

const cols = ALL_COLUMNS.map((c) => `r.${c}`).join(', ');
type Row = [string, number, ...(number | string | null)[]];
interface Stmts {
  stamp: Statement<[number | null, number | null, number]>;
  inQuarter: Statement<[number, number], [number, number | null]>;
  seqAt: Statement<[number], number | null>;
  maxSeq: Statement<[], number | null>;
  sent: Statement<[], number>;
  saveSent: Statement<[number, number]>;
  heads: Statement<[number, number], TelemetryHead>;
  quarter: Statement<[number, number], [number | null, ...Row]>;
  stats: Statement<[number], [number, number | null]>;
  firstStart: Statement<[number], number | null>;
  oldSeqs: Statement<[number, number], [number, number]>;
  unstamp: Statement<[number]>;
  unstampMembers: Statement<[number, number]>;
  before: Statement<[number, number], [number | null, number]>;
}
const stmts = perConnection(
  (db): Stmts => ({
    stamp: db.prepare<[number | null, number | null, number]>(
      'UPDATE buckets_recent SET seq = ?, written = ? WHERE k = ?',
    ),
    inQuarter: db
      .prepare<[number, number], [number, number | null]>(
        'SELECT k, seq FROM buckets_recent WHERE k >= ? AND k < ? ORDER BY k',
      )
      .raw(),
    seqAt: db.prepare<[number], number | null>('SELECT seq FROM buckets_recent WHERE k = ?').pluck(),
    maxSeq: db.prepare<[], number | null>('SELECT MAX(seq) FROM buckets_recent').pluck(),
    sent: db.prepare<[], number>('SELECT seq FROM uplink_sent WHERE id = 1').pluck(),
    saveSent: db.prepare<[number, number]>('UPDATE uplink_sent SET seq = ? WHERE id = 1 AND seq < ?'),
    heads: db
      .prepare<[number, number], TelemetryHead>(
        'SELECT seq, MIN(start_s), MAX(written) FROM buckets_recent WHERE seq > ? GROUP BY seq ORDER BY seq LIMIT ?',
      )
      .raw(),
    quarter: db
      .prepare<[number, number], [number | null, ...Row]>(
        `SELECT r.seq, s.key, r.start_s, ${cols} FROM buckets_recent r JOIN streams s ON s.id = r.stream
          WHERE r.k >= ? AND r.k < ? ORDER BY r.k`,
      )
      .raw(),
    stats: db
      .prepare<[number], [number, number | null]>(
        'SELECT COUNT(DISTINCT seq), MIN(written) FROM buckets_recent WHERE seq > ?',
      )
      .raw(),
    firstStart: db
      .prepare<[number], number | null>(
        'SELECT MIN(start_s) FROM buckets_recent WHERE seq > MAX(?, (SELECT seq FROM uplink_sent WHERE id = 1))',
      )
      .pluck(),
    oldSeqs: db
      .prepare<[number, number], [number, number]>(
        'SELECT seq, MIN(start_s) FROM buckets_recent WHERE seq > ? AND written < ? GROUP BY seq ORDER BY seq',
      )
      .raw(),
    unstamp: db.prepare<[number]>('UPDATE buckets_recent SET seq = NULL, written = NULL WHERE seq = ?'),
    unstampMembers: db.prepare<[number, number]>(
      `UPDATE buckets_recent SET seq = NULL WHERE k >= ? AND k < ? AND seq = ${MEMBER}`,
    ),
    before: db
      .prepare<[number, number], [number | null, number]>(
        `SELECT MAX(seq), COUNT(DISTINCT CASE WHEN seq > ? THEN seq END) FROM buckets_recent WHERE k < ? * ${STREAM_SPAN}`,
      )
      .raw(),
  }),
);

/** Seqs above this are messages' (MEMBER and nothing else is below every seq). */
const above = (seq: number) => Math.max(seq, MEMBER);
const quarterOf = (startS: number): [number, number] => [startS * STREAM_SPAN, (startS + 1) * STREAM_SPAN];

/**
 * A quarter hour's rows in k order, each given the seq of its message: a MEMBER row takes the seq
 * of the next row above it that carries one; a row of a close that made no message (null) is
 * passed over. `orphans`: MEMBER rows with no carrier above them (its row was written again).
 */
function resolveMembers<T>(rows: Iterable<readonly [number | null, T]>): {
  rows: [seq: number, item: T, member: boolean][];
  orphans: T[];
} {
  const out: [number, T, boolean][] = [];
  let members: T[] = [];
  for (const [seq, item] of rows) {
    if (seq === MEMBER) members.push(item);
    else if (seq !== null) {
      for (const m of members) out.push([seq, m, true]);
      out.push([seq, item, false]);
      members = [];
    }
  }
  return { rows: out, orphans: members };
}

/**
 * Whether the file has the seq columns (schema 19): a read-only start serves older files as they
 * are, where no telemetry is pending in the buckets. Checked once per connection.
 */
export const hasTelemetrySeq = perConnection(
  (db): boolean =>
    db.prepare("SELECT 1 FROM pragma_table_info('buckets_recent') WHERE name = 'seq'").get() !== undefined,
);

/**
 * Inside the close's transaction: the close's rows `keys` of one quarter hour carry the message's
 * seq (null: they make none), its last row with `written` and the ones below MEMBER. When the
 * quarter hour holds rows of an earlier close too, every row there is given its message's seq
 * instead (an earlier message's MEMBER rows that lost the row they followed join this one).
 * Returns the k of a row that carries the seq.
 */
export function stampTelemetry(
  db: Database,
  startS: number,
  keys: readonly number[],
  seq: number | null,
  written: number | null,
): number {
  const s = stmts(db);
  const sorted = [...keys].sort((a, b) => a - b);
  const top = sorted.at(-1)!;
  const quarter = s.inQuarter.all(...quarterOf(startS));
  const mine = new Set(sorted);
  if (seq === null || quarter.every(([k]) => mine.has(k))) {
    for (const k of sorted) s.stamp.run(seq === null ? null : k === top ? seq : MEMBER, k === top ? written : null, k);
    return top;
  }
  // shared with an earlier close: each earlier row resolved to the seq it went with
  const earlier = resolveMembers(quarter.filter(([k]) => !mine.has(k)).map(([k, rowSeq]) => [rowSeq, k] as const));
  for (const [rowSeq, k, member] of earlier.rows) if (member) s.stamp.run(rowSeq, null, k);
  for (const k of [...earlier.orphans, ...sorted]) s.stamp.run(seq, written, k);
  return top;
}

/** The seq a recent row carries (null: none, or no such row). */
export function telemetrySeqAt(db: Database, k: number): number | null {
  return hasTelemetrySeq(db) ? (stmts(db).seqAt.get(k) ?? null) : null;
}

/** The highest telemetry seq in the recent rows or acknowledged (0: none). */
export function maxTelemetrySeq(db: Database): number {
  if (!hasTelemetrySeq(db)) return 0;
  const s = stmts(db);
  return Math.max(s.maxSeq.get() ?? 0, s.sent.get() ?? 0);
}

/** The durable ack position (0 before the first). */
export function sentSeq(db: Database): number {
  return hasTelemetrySeq(db) ? (stmts(db).sent.get() ?? 0) : 0;
}

/** Moves the durable ack position up to `seq` (never down), joining the caller's transaction. */
export function saveSentSeq(db: Database, seq: number): void {
  if (!hasTelemetrySeq(db)) return;
  const s = stmts(db).saveSent;
  writeTx(db, () => s.run(seq, seq));
}

/** A pending message's seq, the start (s) of its quarter hour and when it was written (ms). */
export type TelemetryHead = [seq: number, startS: number, written: number | null];

/**
 * The pending telemetry messages after `afterSeq`, at most `limit` (none: all), ascending by seq.
 * Whatever the limit this reads every recent row (seq has no index: it would cost a page a close),
 * a day's at a site that is up and a month's after a month's outage; a caller going through many
 * keeps the heads (uplink/pending.ts).
 */
export function telemetryHeads(db: Database, afterSeq: number, limit = -1): TelemetryHead[] {
  return hasTelemetrySeq(db) ? stmts(db).heads.all(above(afterSeq), limit) : [];
}

/** The pending telemetry messages after `afterSeq`, at most `limit`, ascending by seq. */
export function telemetryAfter(db: Database, afterSeq: number, limit: number): PendingTelemetry[] {
  return telemetryOf(db, telemetryHeads(db, afterSeq, limit));
}

/** The messages of `heads` with their rows as they are now: none for one whose rows were written again since. */
export function telemetryOf(db: Database, heads: readonly TelemetryHead[]): PendingTelemetry[] {
  if (heads.length === 0) return [];
  const s = stmts(db);
  const bySeq = new Map<number, TelemetryRow[]>();
  const read = new Set<number>();
  for (const [, startS] of heads) {
    if (read.has(startS)) continue;
    read.add(startS);
    const quarter = s.quarter.all(...quarterOf(startS)).map(([seq, ...row]) => [seq, row as TelemetryRow] as const);
    for (const [seq, row] of resolveMembers(quarter).rows) {
      const list = bySeq.get(seq);
      if (list) list.push(row);
      else bySeq.set(seq, [row]);
    }
  }
  return heads.map(([seq, , written]) => ({ seq, written: written ?? 0, rows: bySeq.get(seq) ?? [] }));
}

/** Pending telemetry after `afterSeq`: how many messages, and the oldest `written` (ms) or null. */
export function telemetryStats(db: Database, afterSeq: number): { depth: number; oldestAt: number | null } {
  if (!hasTelemetrySeq(db)) return { depth: 0, oldestAt: null };
  const [depth, oldestAt] = stmts(db).stats.get(above(afterSeq))!;
  return { depth, oldestAt };
}

/** The oldest bucket start (s) of telemetry not durably acknowledged, or null. */
export function firstPendingStart(db: Database): number | null {
  return hasTelemetrySeq(db) ? (stmts(db).firstStart.get(MEMBER) ?? null) : null;
}

/** Recent rows starting before `beforeS`: their highest seq, and how many messages above `afterSeq` they carry. */
export function telemetryBefore(db: Database, beforeS: number, afterSeq: number): { top: number; pending: number } {
  if (!hasTelemetrySeq(db)) return { top: 0, pending: 0 };
  const [top, pending] = stmts(db).before.get(above(afterSeq), beforeS)!;
  return { top: top ?? 0, pending };
}

/**
 * The age bound (outbox.maxAgeDays) on telemetry: messages after `afterSeq` written before
 * `olderThan` are no longer pending (their rows stay, as buckets). Joins the caller's
 * transaction; returns their seqs.
 */
export function dropTelemetryBefore(db: Database, afterSeq: number, olderThan: number): number[] {
  if (!hasTelemetrySeq(db)) return [];
  const s = stmts(db);
  const old = s.oldSeqs.all(above(afterSeq), olderThan);
  for (const [seq, startS] of old) {
    s.unstamp.run(seq);
    s.unstampMembers.run(...quarterOf(startS));
  }
  return old.map(([seq]) => seq);
}
