import type { Clock, ClockTimer } from '../core/clock.js';
import { BUCKET_MS, floorToBucket } from './align.js';

/**
 * Calls `close(boundary)` shortly after every 15-minute boundary on the daemon's clock. The
 * grace lets the first poll after the boundary arrive, so the hold of the last sample is
 * carried to the bucket end before the bucket is written.
 *
 * It looks at the wall clock again at least every `recheckMs`: a boundary is a wall-clock
 * label, and after a step forward (NTP setting a Pi that booted in the past) the buckets of the
 * new present close on time instead of one wait planned on the old time later. After a step
 * back, a boundary already closed is not closed again. A close that fails (`close` returns
 * false: a full disk) is tried again after `retryMs`, so the buckets waiting in memory are
 * written, and health clears, as soon as the disk takes them.
 */
export class CloseTimer {
  private timer: ClockTimer | null = null;
  private closed = -Infinity;

  constructor(
    private readonly clock: Clock,
    private readonly graceMs: number,
    private readonly close: (boundary: number) => boolean,
    private readonly recheckMs = 60_000,
    private readonly retryMs = recheckMs,
    /** the wall time to close up to (the clock rules hold it back after a forward step: core/time-labels.ts) */
    private readonly wallNow: () => number = () => clock.now(),
  ) {}

  start(): void {
    // what ended before the start is closed by the first boundary after it, as ever
    this.closed = floorToBucket(this.wallNow() - this.graceMs);
    this.arm();
  }

  stop(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(failed = false): void {
    const now = this.wallNow();
    const boundary = floorToBucket(now - this.graceMs) + BUCKET_MS;
    this.timer = this.clock.setTimeout(
      () => {
        const due = floorToBucket(this.wallNow() - this.graceMs);
        let failed = false;
        if (due > this.closed) {
          if (this.close(due)) this.closed = due;
          else failed = true;
        }
        this.arm(failed);
      },
      Math.min(boundary + this.graceMs - now, failed ? this.retryMs : this.recheckMs),
    );
  }
}
