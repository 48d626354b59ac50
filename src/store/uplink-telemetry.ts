import type { Database, Statement } from 'better-sqlite3';
import { ALL_COLUMNS } from './bucket-columns.js';
import { writeTx } from './db.js';
import { perConnection } from './per-connection.js';

/** k = start_s × STREAM_SPAN + stream (recent-buckets.ts, which imports this file) */
const STREAM_SPAN = 2 ** 20;

/**
 * The uplink's telemetry, kept in the buckets themselves (schema 19, docs/uplink.md "The outbox"):
 * a close stamps its recent rows with the seq of the message they go out in and when that was
 * (`written`), on the page the close has just written, instead of copying a 3 kB message into the
 * outbox (three more pages a close: the row, the AUTOINCREMENT counter's page, the row's page
 * again at its delete). `uplink_sent.seq` is the durable ack position: every telemetry seq at or
 * below it was acknowledged by the broker. A row with a seq above it is pending.
 */

/** A pending message's rows: `[streamKey, start_s, ...ALL_COLUMNS]` in stream key order. */
export type TelemetryRow = [string, number, ...(number | string | null)[]];
export interface PendingTelemetry {
  seq: number;
  written: number;
  rows: TelemetryRow[];
}

const cols = ALL_COLUMNS.map((c) => `r.${c}`).join(', ');
interface Stmts {
  stamp: Statement<[number | null, number | null, number]>;
  seqAt: Statement<[number], number | null>;
  maxSeq: Statement<[], number | null>;
  sent: Statement<[], number>;
  saveSent: Statement<[number, number]>;
  seqsAfter: Statement<[number, number], number>;
  rowsIn: Statement<[number, number], [number, number, string, number, ...(number | string | null)[]]>;
  stats: Statement<[number], [number, number | null]>;
  firstStart: Statement<[], number | null>;
  oldSeqs: Statement<[number, number], number>;
  unstamp: Statement<[number, number]>;
  before: Statement<[number, number], [number | null, number]>;
}
const stmts = perConnection(
  (db): Stmts => ({
    stamp: db.prepare<[number | null, number | null, number]>(
      'UPDATE buckets_recent SET seq = ?, written = ? WHERE k = ?',
    ),
    seqAt: db.prepare<[number], number | null>('SELECT seq FROM buckets_recent WHERE k = ?').pluck(),
    maxSeq: db.prepare<[], number | null>('SELECT MAX(seq) FROM buckets_recent').pluck(),
    sent: db.prepare<[], number>('SELECT seq FROM uplink_sent WHERE id = 1').pluck(),
    saveSent: db.prepare<[number, number]>('UPDATE uplink_sent SET seq = ? WHERE id = 1 AND seq < ?'),
    seqsAfter: db
      .prepare<[number, number], number>('SELECT DISTINCT seq FROM buckets_recent WHERE seq > ? ORDER BY seq LIMIT ?')
      .pluck(),
    rowsIn: db
      .prepare<[number, number], [number, number, string, number, ...(number | string | null)[]]>(
        `SELECT r.seq, r.written, s.key, r.start_s, ${cols} FROM buckets_recent r JOIN streams s ON s.id = r.stream
          WHERE r.seq > ? AND r.seq <= ? ORDER BY r.seq, r.k`,
      )
      .raw(),
    stats: db
      .prepare<[number], [number, number | null]>(
        'SELECT COUNT(DISTINCT seq), MIN(written) FROM buckets_recent WHERE seq > ?',
      )
      .raw(),
    firstStart: db
      .prepare<[], number | null>(
        'SELECT MIN(start_s) FROM buckets_recent WHERE seq > (SELECT seq FROM uplink_sent WHERE id = 1)',
      )
      .pluck(),
    oldSeqs: db
      .prepare<[number, number], number>(
        'SELECT DISTINCT seq FROM buckets_recent WHERE seq > ? AND written < ? ORDER BY seq',
      )
      .pluck(),
    before: db
      .prepare<[number, number], [number | null, number]>(
        `SELECT MAX(seq), COUNT(DISTINCT CASE WHEN seq > ? THEN seq END) FROM buckets_recent WHERE k < ? * ${STREAM_SPAN}`,
      )
      .raw(),
    unstamp: db.prepare<[number, number]>(
      'UPDATE buckets_recent SET seq = NULL, written = NULL WHERE seq > ? AND written < ?',
    ),
  }),
);

/**
 * Whether the file has the seq columns (schema 19): a read-only start serves older files as they
 * are, where no telemetry is pending in the buckets. Checked once per connection.
 */
export const hasTelemetrySeq = perConnection(
  (db): boolean =>
    db.prepare("SELECT 1 FROM pragma_table_info('buckets_recent') WHERE name = 'seq'").get() !== undefined,
);

/** Inside the close's transaction: its rows of one message carry that message's seq (null: of none). */
export function stampTelemetry(
  db: Database,
  keys: readonly number[],
  seq: number | null,
  written: number | null,
): void {
  const s = stmts(db).stamp;
  for (const k of keys) s.run(seq, written, k);
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

/** The pending telemetry messages after `afterSeq`, at most `limit`, ascending by seq. */
export function telemetryAfter(db: Database, afterSeq: number, limit: number): PendingTelemetry[] {
  if (!hasTelemetrySeq(db)) return [];
  const s = stmts(db);
  const seqs = s.seqsAfter.all(afterSeq, limit);
  if (seqs.length === 0) return [];
  const out: PendingTelemetry[] = [];
  for (const [seq, written, ...row] of s.rowsIn.all(afterSeq, seqs.at(-1)!)) {
    const last = out.at(-1);
    if (last?.seq === seq) last.rows.push(row as TelemetryRow);
    else out.push({ seq, written, rows: [row as TelemetryRow] });
  }
  return out;
}

/** Pending telemetry after `afterSeq`: how many messages, and the oldest `written` (ms) or null. */
export function telemetryStats(db: Database, afterSeq: number): { depth: number; oldestAt: number | null } {
  if (!hasTelemetrySeq(db)) return { depth: 0, oldestAt: null };
  const [depth, oldestAt] = stmts(db).stats.get(afterSeq)!;
  return { depth, oldestAt };
}

/** The oldest bucket start (s) of telemetry not durably acknowledged, or null. */
export function firstPendingStart(db: Database): number | null {
  return hasTelemetrySeq(db) ? (stmts(db).firstStart.get() ?? null) : null;
}

/** Recent rows starting before `beforeS`: their highest seq, and how many messages above `afterSeq` they carry. */
export function telemetryBefore(db: Database, beforeS: number, afterSeq: number): { top: number; pending: number } {
  if (!hasTelemetrySeq(db)) return { top: 0, pending: 0 };
  const [top, pending] = stmts(db).before.get(afterSeq, beforeS)!;
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
  const seqs = s.oldSeqs.all(afterSeq, olderThan);
  if (seqs.length > 0) s.unstamp.run(afterSeq, olderThan);
  return seqs;
}
