/**
 * The bucketer's parts that run beside it in the daemon, each a feature of its own so the list in
 * src/main.ts can place its stop where it belongs: the feed before the bucketer's, the final
 * close while the uplink still listens, the close timer after the poller's.
 */

import type { Logger } from 'pino';
import type { Reading } from '../core/channels.js';
import type { Clock } from '../core/clock.js';
import type { EventBus } from '../core/events.js';
import type { Feature } from '../core/feature.js';
import type { HeldOutcome, TimeLabels } from '../core/time-labels.js';
import type { Site } from '../site/site.js';
import { RetriedWrite } from '../store/storage-faults.js';
import type { Bucketer } from './bucketer.js';
import { CloseTimer } from './close-timer.js';

/** held readings kept at most (a 10-minute hold of a large site at a 1 s poll fits) */
const MAX_HELD = 200_000;

/**
 * Readings and stream changes from the bus into the bucketer. New streams need their keys in the
 * database: a data disk that refuses them (full, read-only) leaves the streams in force and tries
 * again after every device poll until it takes them (docs/design.md "Field faults: what the
 * numbers survive"); dropped, a stream learned meanwhile would go unbucketed until the next change.
 */
export class BucketFeed implements Feature {
  readonly name = 'bucketer feed';
  private off: (() => void)[] = [];
  private streamsWaiting = false;
  /** readings labelled after a forward clock step not yet confirmed, oldest first */
  private held: Reading[] = [];
  /** held readings withdrawn (the step was undone) or left over at the cap */
  heldDropped = 0;

  private readonly streamKeys: RetriedWrite;

  constructor(
    private readonly deps: {
      bus: EventBus;
      bucketer: Bucketer;
      site: Site;
      log?: Logger;
      /**
       * the clock rules (core/time-labels.ts): readings at or after heldFrom() wait here, out
       * of every bucket, until the step is confirmed (bucketed) or undone (dropped)
       */
      labels?: Pick<TimeLabels, 'heldFrom'>;
    },
  ) {
    this.streamKeys = new RetriedWrite({
      log: deps.log,
      refused: 'storing new streams failed; they are tried again after every poll',
      again: 'storing new streams works again: they are bucketed',
    });
  }

  start(): void {
    const { bus } = this.deps;
    this.off = [
      bus.on('reading', (r) => this.reading(r)),
      bus.on('streamsChanged', () => this.applyStreams()),
      bus.on('devicePolled', () => {
        if (this.streamsWaiting) this.applyStreams();
      }),
    ];
  }

  stop(): void {
    for (const off of this.off.splice(0)) off();
    // a stop before the step was confirmed: what it labelled was never trusted
    this.heldDropped += this.held.length;
    this.held = [];
  }

  private reading(r: Reading): void {
    const from = this.deps.labels?.heldFrom() ?? null;
    if (from === null || r.ts < from) {
      this.deps.bucketer.ingest(r);
      return;
    }
    if (this.held.length >= MAX_HELD) {
      this.held.shift();
      this.heldDropped++;
    }
    this.held.push(r);
  }

  /** The clock step is confirmed (bucket the held readings) or undone (drop them). */
  settle(outcome: HeldOutcome): void {
    const held = this.held;
    this.held = [];
    if (outcome.kind === 'withdrawn') {
      this.heldDropped += held.length;
      return;
    }
    for (const r of held) this.deps.bucketer.ingest(r);
  }

  private applyStreams(): void {
    const { bucketer, site } = this.deps;
    this.streamsWaiting = !this.streamKeys.attempt(() => bucketer.setStreams(site.streams()));
  }
}

/**
 * Buckets that ended before the stop are complete: its stop writes them, after the poller's last
 * reading and while the uplink still listens (its outbox keeps them for the next start).
 */
export class BucketFlush implements Feature {
  readonly name = 'bucket flush';

  constructor(private readonly deps: { bucketer: Bucketer; clock: Clock; labels?: Pick<TimeLabels, 'closingNow'> }) {}

  start(): void {}

  stop(): void {
    this.deps.bucketer.closeUntil(this.deps.labels?.closingNow() ?? this.deps.clock.now());
  }
}

/** Closes the buckets shortly after each 15-minute boundary; the outcome goes to the health of writes. */
export class BucketClosing implements Feature {
  readonly name = 'bucket closing';
  private readonly timer: CloseTimer;

  constructor(deps: {
    bucketer: Bucketer;
    clock: Clock;
    pollPeriodMs: number;
    log: Logger;
    /** the outcome of each close (ops' Health: a failed write makes the main loop unhealthy) */
    writes: { noteWrite(err?: unknown): void };
    /** the clock rules: nothing past a held forward step is closed (core/time-labels.ts) */
    labels?: Pick<TimeLabels, 'closingNow'>;
  }) {
    const { bucketer, clock, pollPeriodMs, log, writes, labels } = deps;
    const graceMs = Math.min(pollPeriodMs * 1.5, 60_000);
    let failing = false;
    // the wall clock is looked at again every poll period (a step forward closes the new present
    // on time) and a failed close is tried again as often: the buckets wait in memory meanwhile
    const retryMs = Math.min(pollPeriodMs, 60_000);
    this.timer = new CloseTimer(
      clock,
      graceMs,
      (boundary) => {
        try {
          bucketer.closeUntil(boundary);
          writes.noteWrite();
          if (failing) log.info('closing buckets works again: the buckets that waited are written');
          failing = false;
          return true;
        } catch (err) {
          writes.noteWrite(err);
          if (!failing) log.error({ err }, 'closing buckets failed; they wait in memory and are retried every poll');
          failing = true;
          return false;
        }
      },
      retryMs,
      retryMs,
      labels ? () => labels.closingNow() : undefined,
    );
  }

  start(): void {
    this.timer.start();
  }

  stop(): void {
    this.timer.stop();
  }
}
