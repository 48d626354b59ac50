import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { CHANNEL_TABLE } from '../core/channels.js';
import type { Clock, ClockTimer } from '../core/clock.js';
import type { Feature } from '../core/feature.js';
import { type BucketRow, type BucketTuple, COL } from '../store/buckets.js';
import { oldestBucketBefore, oldestPendingUplink, replaceWithHours, rowsToRoll } from '../store/retention.js';
import { listStreams } from '../store/streams.js';

/**
 * Retention of PT15M buckets (docs/configuration.md "Retention: `retention:`"): buckets older than the kept
 * years are rolled up into one row per hour and deleted, so PT1H and P1D stay answerable for
 * ever while the SD card holds a quarter of the rows for the old years.
 *
 * Three rules hold whatever the setting: nothing from the oldest bucket a telemetry message
 * still waiting in the uplink's outbox carries (the cloud has not had it), nothing at or after
 * the newest closed bucket's end (an open bucket is in memory, not here), and the work is done in
 * small transactions (one stream, `batchDays` at most) with a pause between them, so a first
 * pass over years of history never holds the database long enough to delay a poll's write.
 */
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export interface RetentionLimits {
  /** now on the daemon's clock, ms */
  now: number;
  /** years of PT15M buckets kept */
  keepYears: number;
  /** end of the newest closed bucket, ms (-Infinity before one) */
  closedUntil: number;
  /** start of the oldest bucket still waiting in the uplink's outbox, ms; null when none waits */
  pendingFrom: number | null;
}

/** Buckets starting before this (ms, a whole UTC hour) may be rolled up; -Infinity: none. */
export function retentionCutoff(l: RetentionLimits): number {
  const d = new Date(l.now);
  d.setUTCFullYear(d.getUTCFullYear() - l.keepYears);
  let cut = d.getTime();
  cut = Math.min(cut, l.closedUntil);
  if (l.pendingFrom !== null) cut = Math.min(cut, l.pendingFrom);
  if (!Number.isFinite(cut)) return Number.NEGATIVE_INFINITY;
  return Math.floor(cut / HOUR_MS) * HOUR_MS;
}

const CH = CHANNEL_TABLE.map((c) => ({ at: COL[c.field as keyof typeof COL] as number, mean: c.rollup === 'mean' }));

/**
 * One row per hour from PT15M rows and hour rows already there (a bucket written late into a
 * rolled hour joins it): power channels as the mean weighted by covered time, the rest the
 * hour's last value, as the telemetry query rolls them up (src/telemetry/query.ts).
 */
export function hourRows(stream: number, buckets: readonly BucketTuple[], hours: readonly BucketTuple[]): BucketRow[] {
  // an hour row first within its hour: it holds what came before any bucket left there
  const rows = [...hours.map((r) => [r, 0] as const), ...buckets.map((r) => [r, 1] as const)]
    .sort((a, b) => a[0][0] - b[0][0] || a[1] - b[1])
    .map(([r]) => r);
  const out: BucketRow[] = [];
  let i = 0;
  while (i < rows.length) {
    const hour = Math.floor(rows[i]![0] / 3600) * 3600;
    let covered = 0;
    const wsum = CH.map(() => 0);
    const wcov = CH.map(() => 0);
    const last: (number | string | null)[] = CH.map(() => null);
    for (; i < rows.length && rows[i]![0] < hour + 3600; i++) {
      const r = rows[i]!;
      const w = r[COL.coveredMs];
      covered += w;
      CH.forEach((c, j) => {
        const v = r[c.at];
        if (v === null || v === undefined) return;
        if (!c.mean) last[j] = v;
        else if (w > 0) {
          wsum[j]! += (v as number) * w;
          wcov[j]! += w;
        }
      });
    }
    const row: Record<string, number | string | null> = { stream, startS: hour, coveredMs: covered };
    CHANNEL_TABLE.forEach((c, j) => {
      row[c.field] = CH[j]!.mean ? (wcov[j]! > 0 ? wsum[j]! / wcov[j]! : null) : last[j]!;
    });
    out.push(row as BucketRow);
  }
  return out;
}

/**
 * One bounded step: the oldest `batchDays` (at most) of PT15M rows before `cutoff` of the first
 * stream that has some, rolled into hours and deleted. Returns the buckets deleted, and done when
 * no stream has any before the cutoff.
 */
export function retentionStep(db: Database, cutoffMs: number, batchDays = 7): { deleted: number; done: boolean } {
  const cutS = Math.floor(cutoffMs / 1000);
  for (const { key } of listStreams(db)) {
    const first = oldestBucketBefore(db, key, cutS);
    if (first === undefined) continue;
    const fromS = Math.floor(first / 3600) * 3600;
    const toS = Math.min(fromS + batchDays * 86_400, cutS);
    const { buckets, hours } = rowsToRoll(db, key, fromS, toS);
    return { deleted: replaceWithHours(db, key, fromS, toS, hourRows(key, buckets, hours)), done: false };
  }
  return { deleted: 0, done: true };
}

export interface RetentionOptions {
  db: Database;
  clock: Clock;
  keepYears: number;
  /** the bucketer's newest closed end, ms */
  closedUntil: () => number;
  /** the uplink's telemetry topic in the outbox; null without an uplink */
  uplinkTopic: string | null;
  log: Logger;
  /** first pass this long after the start, then one a day (ms of the daemon's clock) */
  firstAfterMs?: number;
  /** between two steps: the poller and the API get the database and the event loop (real ms) */
  pauseMs?: number;
  batchDays?: number;
}

/** The daily pass; listed in src/main.ts when site.yaml sets `retention.fifteenMinuteYears`. */
export class Retention implements Feature {
  readonly name = 'retention';
  private timer: ClockTimer | null = null;
  private stopped = false;
  private running: Promise<void> | null = null;
  /** buckets rolled up since the start */
  deleted = 0;

  constructor(private readonly o: RetentionOptions) {}

  start(): void {
    this.stopped = false;
    this.arm(this.o.firstAfterMs ?? 5 * 60_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.o.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One whole pass, step by step; resolves when no bucket before the cutoff is left (or on stop). */
  pass(): Promise<void> {
    this.running ??= this.run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private arm(ms: number): void {
    this.timer = this.o.clock.setTimeout(() => {
      void this.pass().finally(() => {
        if (!this.stopped) this.arm(DAY_MS);
      });
    }, ms);
  }

  private async run(): Promise<void> {
    const { db, uplinkTopic } = this.o;
    const cutoff = retentionCutoff({
      now: this.o.clock.now(),
      keepYears: this.o.keepYears,
      closedUntil: this.o.closedUntil(),
      pendingFrom: uplinkTopic === null ? null : oldestPendingUplink(db, uplinkTopic),
    });
    let n = 0;
    try {
      while (!this.stopped) {
        const step = retentionStep(db, cutoff, this.o.batchDays);
        if (step.done) break;
        n += step.deleted;
        await new Promise((r) => setTimeout(r, this.o.pauseMs ?? 20));
      }
    } catch (err) {
      // a full disk or a busy database: the next day's pass tries again, polling goes on
      this.o.log.warn({ err: String(err) }, 'retention pass stopped');
    }
    this.deleted += n;
    if (n > 0)
      this.o.log.info({ buckets: n, before: new Date(cutoff).toISOString() }, 'old buckets rolled up into hours');
  }
}
