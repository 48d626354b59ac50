import type { GridState, Reading } from '../core/channels.js';
import type { GridEvent } from '../core/events.js';

export interface GridWatchOptions {
  /** the grid meter's stream id (its readings carry `state`) and the device id events name */
  streamId: string;
  deviceId: string;
  /** consecutive readings a new state must hold before it counts (docs/design.md: default 2) */
  debounce: number;
  /** the state last reported before a restart, so a change while the daemon was down is reported */
  initial?: GridState | null;
}

/**
 * Relay state of the connection point, debounced. A candidate state counts once it has been
 * seen in `debounce` consecutive readings; the event is stamped with the first of them, which
 * is within one poll period of the switch. A reading without `state` leaves the candidate as is.
 * The first state after start is reported only when it differs from the one known before.
 */
export class GridWatch {
  private current: GridState | null;
  private candidate: GridState | null = null;
  private candidateSince = 0;
  private candidateCount = 0;

  constructor(private readonly opts: GridWatchOptions) {
    if (!Number.isInteger(opts.debounce) || opts.debounce < 1)
      throw new RangeError(`debounce must be an integer ≥ 1, got ${opts.debounce}`);
    this.current = opts.initial ?? null;
  }

  get state(): GridState | null {
    return this.current;
  }

  /** Feed every reading; returns the event when this reading completed a change. */
  observe(r: Reading): GridEvent | null {
    if (r.streamId !== this.opts.streamId) return null;
    const s = r.values.state;
    if (s === undefined) return null;
    if (s === this.current) {
      this.candidate = null;
      this.candidateCount = 0;
      return null;
    }
    if (s !== this.candidate) {
      this.candidate = s;
      this.candidateSince = r.ts;
      this.candidateCount = 0;
    }
    this.candidateCount++;
    if (this.candidateCount < this.opts.debounce) return null;
    const previous = this.current;
    this.current = s;
    this.candidate = null;
    this.candidateCount = 0;
    // the first state ever seen is a baseline, not a change
    if (previous === null) return null;
    return { deviceId: this.opts.deviceId, streamId: this.opts.streamId, timestamp: this.candidateSince, state: s };
  }
}
