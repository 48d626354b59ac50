import type { CounterScale, DeviceCounters } from '../core/channels.js';
import type { EnergyFloor, EnergyState, StoredEnergyState } from '../store/energy-state.js';
import { CounterJudge, type CounterJudgeStats } from './counter-judge.js';

export type { EnergyState } from '../store/energy-state.js';
export type { CounterJudgeStats } from './counter-judge.js';

export interface EnergyTrackerOptions {
  /** a sample's power is held for at most this long (3 poll periods, docs/design.md) */
  maxHoldMs: number;
  /** raw device counters wrap at this many Wh when a reading does not say (an acc32 counting Wh: 2^32) */
  counterWrapWh?: number;
}

export const ACC32_WRAP = 2 ** 32;

export function emptyEnergyState(): EnergyState {
  return {
    inWh: 0,
    outWh: 0,
    rawIn: null,
    rawOut: null,
    offsetIn: 0,
    offsetOut: 0,
    heldPowerW: null,
    heldTs: null,
    integratedUntil: null,
    counterTs: null,
    budgetIn: 0,
    budgetOut: 0,
    peakW: 0,
  };
}

/**
 * A stream's state as a start continues it: `s` (its last full save, or the kept state in memory)
 * raised to `f`, what a later save between closes kept of it. The counts take the larger; the
 * integration front moves to the floor's, so the power held at the last full save is not
 * integrated a second time over what the floor already counts. The device counters' last values
 * stay the older ones: the next reading is judged against them (the counter's lifetime = offset +
 * raw never lowers a count, counter-judge.ts accept()).
 */
export function withFloor(s: StoredEnergyState | undefined, f: EnergyFloor | undefined): StoredEnergyState | undefined {
  if (!f) return s;
  const base = s ?? { ...emptyEnergyState(), closedUntil: null };
  return {
    ...base,
    inWh: Math.max(base.inWh, f.inWh),
    outWh: Math.max(base.outWh, f.outWh),
    integratedUntil: f.atMs === null ? base.integratedUntil : Math.max(base.integratedUntil ?? -Infinity, f.atMs),
  };
}

/**
 * Lifetime energy into and out of one device, as magnitudes in Wh that never decrease.
 *
 * Each direction is taken from the device's raw counter once one has been seen (it then stays
 * counter-based) and is otherwise the integral of the held power: the positive part counts in,
 * the negative part out. A power sample holds until the next one but at most maxHoldMs, so a gap
 * longer than that adds nothing past the hold; the same rule decides bucket coverage, keeping
 * bucket energy and bucket power consistent. Counter steps are judged by counter-judge.ts
 * against what the power explains (docs/design.md "Field faults: what the numbers survive").
 */
export class EnergyTracker {
  private readonly s: EnergyState;
  private readonly maxHoldMs: number;
  private readonly judge: CounterJudge;

  constructor(opts: EnergyTrackerOptions, state?: EnergyState) {
    if (!(opts.maxHoldMs > 0)) throw new RangeError(`maxHoldMs must be > 0, got ${opts.maxHoldMs}`);
    this.maxHoldMs = opts.maxHoldMs;
    this.s = { ...emptyEnergyState(), ...(state ?? {}) };
    this.judge = new CounterJudge(this.s, { maxHoldMs: opts.maxHoldMs, wrapWh: opts.counterWrapWh ?? ACC32_WRAP });
  }

  /** Lifetime Wh in, spec sign (>= 0). */
  get increment(): number {
    return this.s.inWh;
  }

  /** Lifetime Wh out, spec sign (<= 0). */
  get decrement(): number {
    return this.s.outWh === 0 ? 0 : -this.s.outWh;
  }

  /**
   * False until a counter or a power sample gave that direction's count a starting point (a
   * stream with neither reports no energy rather than a made-up zero).
   */
  get knowsIn(): boolean {
    return this.s.rawIn !== null || this.s.integratedUntil !== null;
  }

  get knowsOut(): boolean {
    return this.s.rawOut !== null || this.s.integratedUntil !== null;
  }

  /** counter steps held, confirmed as resets, taken as wraps since start */
  get counterStats(): CounterJudgeStats {
    return this.judge.stats();
  }

  state(): EnergyState {
    return { ...this.s };
  }

  /** Integrate the held power up to `ts` (never past the hold limit, never backwards). */
  advanceTo(ts: number): void {
    const s = this.s;
    if (s.heldPowerW === null || s.heldTs === null || s.integratedUntil === null) return;
    const from = s.integratedUntil;
    const to = Math.min(ts, s.heldTs + this.maxHoldMs);
    if (to > from) {
      const wh = (s.heldPowerW * (to - from)) / 3_600_000;
      if (wh > 0 && s.rawIn === null) s.inWh += wh;
      else if (wh < 0 && s.rawOut === null) s.outWh -= wh;
    }
    if (ts > from) s.integratedUntil = ts;
  }

  /** One reading: `powerW` of the integrated channel and/or the device's raw counters. */
  sample(ts: number, powerW: number | undefined, counters?: DeviceCounters): void {
    const s = this.s;
    // the power before this reading, while it still holds: with this one it bounds the counter step
    const before = s.heldPowerW !== null && s.heldTs !== null && ts - s.heldTs <= this.maxHoldMs ? s.heldPowerW : null;
    this.advanceTo(ts);
    const p = powerW !== undefined && Number.isFinite(powerW) ? powerW : null;
    if (p !== null) {
      // A sample behind the integration front (clock stepped back) holds only for what is left
      // of its window after the front: advanceTo never counts time twice.
      s.heldPowerW = p;
      s.heldTs = ts;
      if (s.integratedUntil === null) s.integratedUntil = ts;
    }
    const inWh = finiteCounter(counters?.inWh);
    const outWh = finiteCounter(counters?.outWh);
    if (inWh === undefined && outWh === undefined) {
      if (p !== null) this.judge.notePower(p);
      return;
    }
    const explained = this.judge.explainedWh(ts, before, p);
    if (p !== null) this.judge.notePower(p);
    s.counterTs = Math.max(ts, s.counterTs ?? ts);
    if (inWh !== undefined) this.judge.step('in', inWh, scaleOr(counters?.inScale), explained);
    if (outWh !== undefined) this.judge.step('out', outWh, scaleOr(counters?.outScale), explained);
  }
}

const finiteCounter = (v: number | undefined): number | undefined =>
  v !== undefined && Number.isFinite(v) && v >= 0 ? v : undefined;

const scaleOr = (s: CounterScale | undefined): CounterScale | undefined =>
  s && s.wrapWh > 0 && s.stepWh >= 0 ? s : undefined;
