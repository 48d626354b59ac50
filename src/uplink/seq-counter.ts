import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { ClosedBucket } from '../core/events.js';
import { recentKey } from '../store/recent-key.js';
import { outboxSeq, raiseOutboxSeq, SEQ_BLOCK, SeqCeiling } from '../store/seq-ceiling.js';
import { findStreamKey } from '../store/streams.js';
import { maxTelemetrySeq, stampTelemetry, telemetrySeqAt } from '../store/uplink-telemetry.js';
import { byStart, makesTelemetry, type PayloadContext } from './payloads.js';

/**
 * The site's one seq space (docs/mqtt-contract.md: increasing by one per message written, never
 * reused), shared by the outbox's rows and the telemetry stamped on the buckets
 * (store/uplink-telemetry.ts). The highest seq handed out is the larger of the outbox's
 * AUTOINCREMENT counter and the telemetry stamps; the latter is kept here, so a close writes no
 * counter page: read from the file at start (the day's fold raises the outbox's counter over
 * every seq it moves out of the recent rows), then only ever raised, by a close's stamps once its
 * commit is known: its `bucketsClosed` (confirm()), or its last stamp found where it was written.
 * A close that rolled back hands its seqs out again; one committed and since overwritten (its
 * quarter hour closed again) never does.
 */
export class SeqCounter {
  /** the highest telemetry seq committed, as far as this process knows; null: read it from the file */
  private stamped: number | null = null;
  /** the last close's stamps while its commit is not known: its highest seq and a row that carries it */
  private tentative: { k: number; seq: number } | null = null;

  private ceiling: SeqCeiling | null = null;
  /** no ceiling and no plausible clock yet: no seq is known to be above what the site sent before */
  private unknown = false;

  constructor(
    private readonly db: Database,
    private readonly now: () => number,
    /** whether the wall clock can be right (not before the build): seqs are never seeded from one that cannot */
    private readonly clockPlausible?: () => boolean,
  ) {}

  /**
   * Seqs continue above everything the site sent (docs/mqtt-contract.md), whatever the clock
   * says: a database that is behind the ceiling file (made fresh after damage, or restored) jumps
   * to it; a new data directory starts above the wall clock once that can be right.
   */
  seed(seqFile: string, log: Logger): void {
    this.ceiling = new SeqCeiling(seqFile);
    const seq = this.current();
    if (this.ceiling.value > 0) {
      // a live database is never more than a block or two below its ceiling
      if (seq < this.ceiling.value - 2 * SEQ_BLOCK) {
        raiseOutboxSeq(this.db, this.ceiling.value);
        log.warn(
          { from: seq, to: this.ceiling.value },
          'uplink seq continued from the ceiling file: the database is new',
        );
      }
    } else this.unknown = true;
    this.known();
  }

  /** Whether a seq handed out now is above the site's earlier ones; settles it once the clock can be trusted. */
  known(): boolean {
    if (!this.unknown) return true;
    if (!(this.clockPlausible?.() ?? true)) return false;
    // settled only once raised: a disk that refuses the raise leaves it to the next write, rather
    // than letting that one continue from a counter seeded under the wrong clock
    raiseOutboxSeq(this.db, this.now());
    this.unknown = false;
    return true;
  }

  /** Thrown inside a bucket close, this rolls it back: its buckets wait in memory and come again. */
  private mustKnow(): void {
    if (!this.known()) throw new Error('uplink: no seq is known to be safe until the wall clock is set');
  }

  /**
   * Before `count` messages go into the outbox (inside their transaction): the ceiling is raised
   * when they would pass it, and the outbox's counter continues above the telemetry stamped on
   * the buckets: one seq space.
   */
  beforeOutbox(count: number): void {
    this.mustKnow();
    const from = this.current();
    this.ceiling?.reserveAbove(from, count);
    raiseOutboxSeq(this.db, from);
  }

  /** The highest seq handed out (0: none yet). */
  current(): number {
    this.stamped ??= maxTelemetrySeq(this.db);
    const t = this.tentative;
    if (t && telemetrySeqAt(this.db, t.k) === t.seq) this.stamped = Math.max(this.stamped, t.seq);
    this.tentative = null;
    return Math.max(this.stamped, outboxSeq(this.db));
  }

  /** The last close committed (its `bucketsClosed`): its seqs are taken for good. */
  confirm(): void {
    if (this.tentative) this.stamped = Math.max(this.stamped ?? 0, this.tentative.seq);
    this.tentative = null;
  }

  /**
   * Inside the close's transaction, after its rows are written: each telemetry message
   * telemetryBodies() makes of them (one per bucket start) takes the next seq, on its rows (the
   * seq ceiling raised first when they would pass it). Returns the seqs.
   */
  stampClose(ctx: PayloadContext, closed: readonly ClosedBucket[], written: number): number[] {
    const groups: { startS: number; keys: number[] }[] = [];
    for (const group of byStart(closed)) {
      const startS = group[0]!.start / 1000;
      const keys: number[] = [];
      for (const b of group) {
        const stream = findStreamKey(this.db, b.streamId);
        if (stream !== undefined) keys.push(recentKey(startS, stream));
      }
      if (keys.length === 0) continue;
      // a period none of whose streams makes an entry sends nothing, as before: its rows carry no seq
      if (!makesTelemetry(ctx, group)) stampTelemetry(this.db, startS, keys, null, null);
      else groups.push({ startS, keys });
    }
    if (groups.length === 0) return [];
    this.mustKnow();
    const from = this.current();
    this.ceiling?.reserveAbove(from, groups.length);
    let k = 0;
    const seqs = groups.map((g, n) => {
      k = stampTelemetry(this.db, g.startS, g.keys, from + n + 1, written);
      return from + n + 1;
    });
    this.tentative = { k, seq: seqs.at(-1)! };
    return seqs;
  }
}
