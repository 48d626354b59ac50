/**
 * The audit of control's register writes (docs/control.md "Fail-safe": every write is recorded).
 * A record that cannot be stored for want of storage (a full disk) waits in memory, in order, and
 * is stored with the next one that can be: the write it records has happened, and failing the
 * command over its record would make the executor fall back to self-consumption and try the
 * command again at every tick, two holding-register writes a tick (flash wear, a flapping battery)
 * for as long as the disk stays full. Any other error is a bug and is thrown.
 */
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { recordWrites, type WriteAudit } from '../store/control.js';
import { RetriedWrite } from '../store/storage-faults.js';

/** records waiting for room on disk, at most this many, the oldest dropped first (days of keep-alives) */
export const MAX_WAITING_AUDITS = 10_000;

export class WriteAuditLog {
  private waiting: WriteAudit[] = [];
  private readonly stores: RetriedWrite;

  constructor(private readonly deps: { db: Database; log: Logger; deviceId: string }) {
    this.stores = new RetriedWrite({
      log: deps.log,
      context: { deviceId: deps.deviceId },
      refused: 'recording control writes failed; the records wait in memory (the writes stand)',
      again: 'control write records that waited in memory are stored',
    });
  }

  /** records `rows` after those still waiting; throws only what is not a storage fault */
  record(rows: readonly WriteAudit[]): void {
    this.waiting.push(...rows);
    const over = this.waiting.length - MAX_WAITING_AUDITS;
    if (over > 0) {
      this.waiting.splice(0, over);
      this.deps.log.error(
        { deviceId: this.deps.deviceId, dropped: over },
        'too many control write records waiting for room on disk: the oldest are dropped',
      );
    }
    this.flush();
  }

  /** stores what waits, if anything does */
  flush(): void {
    if (this.waiting.length === 0) return;
    if (this.stores.attempt(() => recordWrites(this.deps.db, this.waiting))) this.waiting = [];
  }

  get waitingCount(): number {
    return this.waiting.length;
  }
}
