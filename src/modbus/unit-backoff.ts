import { doubling } from '../core/backoff.js';
import { ModbusError } from './errors.js';

export interface UnitBackoffOptions {
  /** timeouts in a row before a unit is skipped; one lost answer is noise, two are a pattern */
  failuresBeforeBackoff?: number;
  /** first skip window, ms; doubles with each further timeout */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** real time, ms: a unit's silence is measured against network timeouts, not the demo clock */
  now?: () => number;
}

interface UnitState {
  timeouts: number;
  nextAttemptAt: number;
}

/**
 * Per-unit backoff on a shared bus. Every request to a unit that does not answer holds the bus
 * for a whole timeout, during which no other unit on it can be read. After a few timeouts in a
 * row the unit is skipped (its requests fail at once, without touching the wire) until its next
 * attempt time, which doubles with every further timeout up to the maximum; one answer resets it.
 * Only timeouts count: an exception or a garbled frame costs the bus one frame, not a timeout.
 */
export class UnitBackoff {
  private readonly units = new Map<number, UnitState>();
  private readonly threshold: number;
  private readonly minMs: number;
  private readonly maxMs: number;
  private readonly now: () => number;

  constructor(opts: UnitBackoffOptions = {}) {
    this.threshold = opts.failuresBeforeBackoff ?? 2;
    this.minMs = opts.minBackoffMs ?? 2_000;
    this.maxMs = opts.maxBackoffMs ?? 120_000;
    this.now = opts.now ?? Date.now;
  }

  /** The error to fail a request with instead of sending it, or null when it may go on the wire. */
  check(unitId: number, bus: string): ModbusError | null {
    const s = this.units.get(unitId);
    if (!s || s.timeouts < this.threshold) return null;
    const wait = s.nextAttemptAt - this.now();
    if (wait <= 0) return null;
    return new ModbusError(
      'timeout',
      `unit ${unitId} on ${bus} did not answer ${s.timeouts} times in a row; skipped for ${(wait / 1000).toFixed(1)} s more`,
      undefined,
      true,
    );
  }

  answered(unitId: number): void {
    this.units.delete(unitId);
  }

  timedOut(unitId: number): void {
    const s = this.units.get(unitId) ?? { timeouts: 0, nextAttemptAt: 0 };
    s.timeouts++;
    if (s.timeouts >= this.threshold) {
      s.nextAttemptAt = this.now() + doubling(this.minMs, this.maxMs, s.timeouts - this.threshold);
    }
    this.units.set(unitId, s);
  }

  /** timeouts in a row of a unit (0 when it answers) */
  timeoutsOf(unitId: number): number {
    return this.units.get(unitId)?.timeouts ?? 0;
  }
}
