import type { Database } from 'better-sqlite3';
import { CHANNEL_TABLE } from '../core/channels.js';
import type { ClosedBucket } from '../core/events.js';
import { bucketsGeneration } from '../store/buckets.js';
import { writeTx } from '../store/db.js';
import { type OutboxRow, type OutboxStats, outboxStats, readAfter, remove } from '../store/outbox.js';
import { listStreams } from '../store/streams.js';
import {
  type PendingTelemetry,
  saveSentSeq,
  sentSeq,
  type TelemetryHead,
  telemetryHeads,
  telemetryOf,
  telemetryStats,
} from '../store/uplink-telemetry.js';
import { BUCKET_MS } from '../telemetry/align.js';
import { type PayloadContext, telemetryBodies } from './payloads.js';

/** A message waiting to go: an outbox row, or telemetry rebuilt from the buckets it was stamped on. */
export interface PendingRow extends OutboxRow {
  telemetry: boolean;
}

/**
 * Bucket rows a read rebuilds into messages, at most (one message at least): a message holds a row
 * of every stream, so at 272 streams the drain's 256 messages a read were 70k rows and 0.35 s of
 * CPU here, several times that on a Pi, with the limits loop waiting on the same thread.
 */
const ROWS_PER_READ = 4096;

/** How long the telemetry ack position may stay in memory only (daemon-clock ms): a crash sends at most this again. */
export const SENT_SAVE_MS = 3_600_000;

/**
 * A stored row as the close handed it to the bus (telemetry/bucketer.ts toClosedBucket): the
 * channels in the channel table's order, those without a value left out. Columns after start_s
 * are covered_ms, then the channel table's (store/bucket-columns.ts ALL_COLUMNS).
 */
export function closedBucketOf(streamId: string, startS: number, columns: readonly (number | string | null)[]) {
  const values: Record<string, number | string> = {};
  for (let i = 0; i < CHANNEL_TABLE.length; i++) {
    const v = columns[1 + i];
    if (v !== null && v !== undefined) values[CHANNEL_TABLE[i]!.id] = v;
  }
  const start = startS * 1000;
  return { streamId, start, end: start + BUCKET_MS, values } satisfies ClosedBucket;
}

/** The telemetry message a stamped seq's rows make: the body the close would have written into the outbox. */
export function rebuildTelemetry(ctx: PayloadContext, p: PendingTelemetry): PendingRow | null {
  const group = p.rows.map(([streamId, startS, ...columns]) => closedBucketOf(streamId, startS, columns));
  const [msg] = telemetryBodies(ctx, group);
  return msg ? { ...msg, seq: p.seq, createdAt: p.written, telemetry: true } : null;
}

/**
 * What the drainer sends, from both places, merged by seq: the outbox's rows (state messages,
 * grid events, resync copies, and telemetry an older version wrote there) and the telemetry
 * stamped on the buckets. Acknowledged outbox rows are deleted; telemetry moves an ack position
 * (the highest seq with every pending telemetry seq at or below it acknowledged), kept in memory
 * and saved to `uplink_sent` at most once an hour in a commit of its own, at stop, and in the
 * fold's transaction (store/recent-buckets.ts holdFold): after a crash at most that hour goes
 * again, which seq de-duplication absorbs (docs/mqtt-contract.md).
 */
export class Pending {
  /** every telemetry seq at or below this was acknowledged */
  private ackedThrough: number;
  /** telemetry seqs above ackedThrough read since the last attach, ascending */
  private seen: number[] = [];
  /** of those, the acknowledged ones */
  private readonly acked = new Set<number>();
  private savedAt: number;
  /**
   * Every telemetry message with a seq above `from` as last read, ascending. Each read of them
   * goes through every recent row, which after a month's outage is the month's (272 streams:
   * 780k rows, 0.1 s of CPU here and several times that on a Pi, with the limits loop waiting on
   * the same thread), so the drain's catch-up reads them once and takes each read's from them. A
   * message written since has a seq above all of them (seqs only grow), so the kept list is
   * complete up to its last; one whose rows were written again since comes back with none.
   */
  private heads: { from: number; list: TelemetryHead[] } | null = null;
  /** bucket rows a message held in the last read (before the first: the streams stored, read then) */
  private rowsPerMessage = 0;
  /** telemetryStats as last read, for as long as no bucket, acknowledgement or drop changed it */
  private kept: { generation: number; through: number; stats: { depth: number; oldestAt: number | null } } | null =
    null;

  constructor(
    private readonly db: Database,
    private readonly ctx: PayloadContext,
    private readonly now: () => number,
  ) {
    this.ackedThrough = sentSeq(db);
    this.savedAt = now();
  }

  get through(): number {
    return this.ackedThrough;
  }

  /** A new connection reads from the ack position again: what was seen is read anew. */
  restart(): void {
    this.seen = [];
  }

  /** The next messages after `afterSeq`, oldest first: at most `limit`, and telemetry of at most ROWS_PER_READ rows. */
  read(afterSeq: number, limit: number): PendingRow[] {
    const outbox = readAfter(this.db, afterSeq, limit);
    if (this.rowsPerMessage === 0) this.rowsPerMessage = Math.max(1, listStreams(this.db).length);
    const cap = Math.max(1, Math.min(limit, Math.floor(ROWS_PER_READ / this.rowsPerMessage)));
    const stamped = telemetryOf(this.db, this.headsAfter(Math.max(afterSeq, this.ackedThrough), cap));
    if (stamped.length > 0)
      this.rowsPerMessage = Math.max(1, stamped.reduce((n, p) => n + p.rows.length, 0) / stamped.length);
    // each list is complete up to its last seq unless it came back short
    let upTo = Infinity;
    if (outbox.length === limit) upTo = outbox.at(-1)!.seq;
    if (stamped.length === cap) upTo = Math.min(upTo, stamped.at(-1)!.seq);
    const out: PendingRow[] = [];
    for (const row of outbox) if (row.seq <= upTo) out.push({ ...row, telemetry: false });
    for (const p of stamped) {
      if (p.seq > upTo) break;
      if (p.seq > (this.seen.at(-1) ?? this.ackedThrough)) this.seen.push(p.seq);
      if (this.acked.has(p.seq)) continue;
      const row = rebuildTelemetry(this.ctx, p);
      // none: the site no longer has its streams; nothing to send, as a close would have sent nothing
      if (row) out.push(row);
      else this.acked.add(p.seq);
    }
    this.advance();
    return out.sort((a, b) => a.seq - b.seq);
  }

  /** Acknowledged messages: outbox rows deleted (one transaction), telemetry's position moved. */
  ack(rows: readonly { seq: number; telemetry: boolean }[]): void {
    const outbox: number[] = [];
    for (const r of rows) {
      if (!r.telemetry) outbox.push(r.seq);
      else if (r.seq > this.ackedThrough) this.acked.add(r.seq);
    }
    if (outbox.length > 0) remove(this.db, outbox);
    this.advance();
    if (this.now() - this.savedAt >= SENT_SAVE_MS) this.save();
  }

  /** Telemetry the age bound dropped: no longer waited for. */
  dropped(seqs: readonly number[]): void {
    for (const s of seqs) if (s > this.ackedThrough) this.acked.add(s);
    this.kept = null;
    this.advance();
  }

  /** Saves the ack position now, in a commit of its own (at stop, and hourly). */
  save(): void {
    this.savedAt = this.now();
    if (this.ackedThrough > sentSeq(this.db)) writeTx(this.db, () => saveSentSeq(this.db, this.ackedThrough));
  }

  /** Messages waiting: the outbox's and the telemetry's; bytes are the outbox's (telemetry waits in its buckets). */
  stats(): OutboxStats {
    const o = outboxStats(this.db);
    const t = this.telemetryStats();
    const oldestAt =
      o.oldestAt === null ? t.oldestAt : t.oldestAt === null ? o.oldestAt : Math.min(o.oldestAt, t.oldestAt);
    return { depth: o.depth + t.depth, bytes: o.bytes, oldestAt };
  }

  /** At most `limit` heads after `from`: from the kept list while it holds that many, else read anew. */
  private headsAfter(from: number, limit: number): TelemetryHead[] {
    const h = this.heads;
    if (h && from >= h.from) {
      let i = 0;
      while (i < h.list.length && h.list[i]![0] <= from) i++;
      // those passed are let go: a read from below them (a new connection) reads the list anew
      h.list = h.list.slice(i);
      h.from = from;
      if (h.list.length >= limit) return h.list.slice(0, limit);
    }
    // fewer kept than asked for: messages written since may follow them
    const list = telemetryHeads(this.db, from);
    this.heads = { from, list };
    return list.slice(0, limit);
  }

  /**
   * Pending telemetry's count and age, for /metrics, /healthz and the status message: read again
   * only after a close (a bucket written), an acknowledgement or a drop, not at every scrape,
   * each of which reads every recent row (a month's during a month's outage).
   */
  private telemetryStats(): { depth: number; oldestAt: number | null } {
    const generation = bucketsGeneration(this.db);
    const k = this.kept;
    if (k && k.generation === generation && k.through === this.ackedThrough) return k.stats;
    const stats = telemetryStats(this.db, this.ackedThrough);
    // inside a close the stamps may not all be written yet: only what is committed is kept
    this.kept = this.db.inTransaction ? null : { generation, through: this.ackedThrough, stats };
    return stats;
  }

  private advance(): void {
    let n = 0;
    while (n < this.seen.length && this.acked.has(this.seen[n]!)) {
      this.acked.delete(this.seen[n]!);
      this.ackedThrough = this.seen[n]!;
      n++;
    }
    if (n > 0) this.seen.splice(0, n);
  }
}
