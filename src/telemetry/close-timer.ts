import type { Clock, ClockTimer } from '../core/clock.js';
import { BUCKET_MS } from './align.js';

/**
 * Calls `close(boundary)` shortly after every 15-minute boundary on the daemon's clock. The
 * grace lets the first poll after the boundary arrive, so the hold of the last sample is
 * carried to the bucket end before the bucket is written.
 */
export class CloseTimer {
  private timer: ClockTimer | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly graceMs: number,
    private readonly close: (boundary: number) => void,
  ) {}

  start(): void {
    this.arm();
  }

  stop(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(): void {
    const now = this.clock.now();
    const boundary = Math.floor((now - this.graceMs) / BUCKET_MS) * BUCKET_MS + BUCKET_MS;
    this.timer = this.clock.setTimeout(
      () => {
        this.close(boundary);
        this.arm();
      },
      boundary + this.graceMs - now,
    );
  }
}
