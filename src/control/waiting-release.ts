/**
 * The owner's release (the status page's button: every storage system to self-consumption, its
 * plan removed) on a data disk that refuses storing it (docs/design.md "Field faults: what the
 * numbers survive"): the owner's stop must not wait for disk space. It takes effect at once in
 * memory (the executors and control's views see self-consumption and no plan) and is stored at
 * the executors' next steps once the disk takes writes. A change made after it waits behind it:
 * control stores the release first, or refuses the change as the disk refuses it.
 */
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import { deletePlan, setMode } from '../store/control.js';
import { writeTx } from '../store/db.js';
import { isStorageFault } from '../store/storage-faults.js';

export class WaitingRelease {
  /** device id → who released it */
  private readonly waiting = new Map<string, string>();
  /** the disk's last refusal, while one waits */
  private refusal: unknown;

  constructor(private readonly d: { db: Database; clock: Clock; log: Logger }) {}

  /** Releases the devices: stored now when the disk takes it, else held in memory. */
  release(deviceIds: readonly string[], by: string): void {
    for (const id of deviceIds) this.waiting.set(id, by);
    this.store();
  }

  /** Whether the device's release waits for the disk (for views: tries no write). */
  waits(deviceId: string): boolean {
    return this.waiting.has(deviceId);
  }

  /** The executor's step: tries to store what waits, then whether the device's release still waits. */
  holds(deviceId: string): boolean {
    if (this.waiting.size > 0) this.store();
    return this.waiting.has(deviceId);
  }

  /** Before any other control change: the release is stored first, or the disk's refusal is thrown. */
  requireStored(): void {
    if (this.waiting.size > 0 && !this.store()) throw this.refusal;
  }

  private store(): boolean {
    const { db, clock, log } = this.d;
    for (const [id, by] of this.waiting) {
      try {
        writeTx(db, () => {
          setMode(db, id, 'self-consumption', by, clock.now());
          deletePlan(db, id);
        });
      } catch (err) {
        if (!isStorageFault(err)) throw err;
        if (this.refusal === undefined)
          log.error(
            { err, deviceId: id },
            'storing the release failed (the data disk takes no writes): self-consumption holds in memory until it is stored',
          );
        this.refusal = err;
        return false;
      }
      this.waiting.delete(id);
    }
    if (this.refusal !== undefined) log.info('the release that waited in memory is stored');
    this.refusal = undefined;
    return true;
  }
}
