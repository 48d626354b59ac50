/**
 * The bucketer's side of the kept energy counts (store/energy-keep.ts): every KEEP_MS of readings
 * the counts of every stream go to a file in memory that outlives a kill, and a start takes, per
 * stream, whichever of the kept and the durably saved state is newer (issue 41, finding 5). The file
 * stays after a clean stop: a database damaged before the next start may have lost the durable
 * state, and the kept one then still carries the counts.
 */
import { asOf, readEnergyKeep, removeEnergyKeep, writeEnergyKeep } from '../store/energy-keep.js';
import type { StoredEnergyState } from '../store/energy-state.js';

/**
 * How often the energy counts are kept, on reading time: what a life that ends without a stop
 * loses at most. A write to a tmpfs: the SD card pays nothing for it.
 */
export const KEEP_MS = 10_000;
/**
 * and at most once a real second: history pre-fill and the demo's fast clocks run through readings
 * many times faster than real time, and a keep per 10 s of them would be thousands of writes at
 * start. On a real-time clock it changes nothing; on one faster than 10× a life loses at most a
 * real second of readings.
 */
export const KEEP_REAL_MS = 1000;

export class EnergyKeeper {
  private nextAt = Number.NEGATIVE_INFINITY;
  private lastReal = Number.NEGATIVE_INFINITY;
  private kept: Map<string, StoredEnergyState> | null = null;

  constructor(
    private readonly file: string | undefined,
    private readonly realMs = KEEP_REAL_MS,
  ) {}

  /**
   * Drops what an earlier life kept: the database is new at a path an earlier one had (the data
   * folder emptied, the package purged and installed again without a reboot), and its counts and
   * times are not this database's. Taken, they continued the old lifetimes and dropped every
   * reading older than the old life's last one: a demo's history pre-fill stored only its last
   * quarter hour.
   */
  forget(): void {
    this.kept = new Map();
    if (this.file) removeEnergyKeep(this.file);
  }

  /** The state a stream continues from: the kept one where it is newer than the durable one. */
  pick(streamId: string, durable: StoredEnergyState | undefined): StoredEnergyState | undefined {
    if (!this.file) return durable;
    this.kept ??= readEnergyKeep(this.file);
    const k = this.kept.get(streamId);
    return k && (!durable || asOf(k) > asOf(durable)) ? k : durable;
  }

  /** Keeps `states()` when KEEP_MS of readings passed since the last keep. */
  maybeKeep(newestTs: number, states: () => Map<string, StoredEnergyState>): void {
    if (!this.file || newestTs < this.nextAt) return;
    if (performance.now() - this.lastReal < this.realMs) return;
    this.keepNow(newestTs, states);
  }

  /**
   * Keeps `states()` whatever the time since the last keep: called before counts are shown (a
   * durable save, a close), so whatever a live view published is also in memory. A damaged card can
   * take the durable save back after a kill; the kept counts then still hold what was shown, and
   * a lifetime never goes lower (test/faults/storage-invariants: WAL noise after a kill published
   * 775 Wh after 795 Wh while the keep was a real second older than the save).
   */
  keepNow(newestTs: number, states: () => Map<string, StoredEnergyState>): void {
    if (!this.file) return;
    this.lastReal = performance.now();
    this.nextAt = Math.floor(newestTs / KEEP_MS) * KEEP_MS + KEEP_MS;
    writeEnergyKeep(this.file, states());
  }
}
