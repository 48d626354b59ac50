import type { DeviceCounters } from '../core/channels.js';
import type { EnergyState } from '../store/energy-state.js';

export type { EnergyState } from '../store/energy-state.js';

export interface EnergyTrackerOptions {
  /** a sample's power is held for at most this long (3 poll periods, docs/design.md) */
  maxHoldMs: number;
  /** raw device counters wrap at this many Wh (an acc32 counting Wh: 2^32) */
  counterWrapWh?: number;
}

export const ACC32_WRAP = 2 ** 32;
const COUNTER_NOISE_WH = 1;

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
  };
}

/**
 * Lifetime energy into and out of one device, as magnitudes in Wh that never decrease.
 *
 * Each direction is taken from the device's raw counter once one has been seen (it then stays
 * counter-based) and is otherwise the integral of the held power: the positive part counts in,
 * the negative part out. A power sample holds until the next one but at most maxHoldMs, so a gap
 * longer than that adds nothing past the hold; the same rule decides bucket coverage, keeping
 * bucket energy and bucket power consistent.
 */
export class EnergyTracker {
  private readonly s: EnergyState;
  private readonly maxHoldMs: number;
  private readonly wrapWh: number;

  constructor(opts: EnergyTrackerOptions, state?: EnergyState) {
    if (!(opts.maxHoldMs > 0)) throw new RangeError(`maxHoldMs must be > 0, got ${opts.maxHoldMs}`);
    this.maxHoldMs = opts.maxHoldMs;
    this.wrapWh = opts.counterWrapWh ?? ACC32_WRAP;
    this.s = { ...(state ?? emptyEnergyState()) };
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
    this.advanceTo(ts);
    if (powerW !== undefined && Number.isFinite(powerW)) {
      // A sample behind the integration front (clock stepped back) holds only for what is left
      // of its window after the front: advanceTo never counts time twice.
      s.heldPowerW = powerW;
      s.heldTs = ts;
      if (s.integratedUntil === null) s.integratedUntil = ts;
    }
    if (counters?.inWh !== undefined) this.counterIn(counters.inWh);
    if (counters?.outWh !== undefined) this.counterOut(counters.outWh);
  }

  private counterIn(raw: number): void {
    if (!(raw >= 0) || !Number.isFinite(raw)) return;
    const s = this.s;
    s.offsetIn = this.nextOffset(s.rawIn, s.offsetIn, raw);
    s.rawIn = raw;
    s.inWh = Math.max(s.inWh, s.offsetIn + raw);
  }

  private counterOut(raw: number): void {
    if (!(raw >= 0) || !Number.isFinite(raw)) return;
    const s = this.s;
    s.offsetOut = this.nextOffset(s.rawOut, s.offsetOut, raw);
    s.rawOut = raw;
    s.outWh = Math.max(s.outWh, s.offsetOut + raw);
  }

  /**
   * The offset that makes offset + raw continue the lifetime count. A fall from the top tenth
   * of the counter range to its bottom tenth is a wrap (nothing lost); a fall of at most
   * COUNTER_NOISE_WH is read jitter (the lifetime just does not move); any other fall is a reset
   * to zero (what the device counted between the last sample and the reset is unknowable).
   */
  private nextOffset(last: number | null, offset: number, raw: number): number {
    // The first counter is the device's own lifetime figure (design: a meter reading 4,321.25 kWh
    // reports 4,321,250 Wh at first contact), even when power integration already counted a little
    // before it: the callers' max() keeps the series from ever going back, so an integrated count
    // larger than a young device's counter only holds until the counter passes it.
    if (last === null) return 0;
    if (raw >= last || last - raw <= COUNTER_NOISE_WH) return offset;
    const w = this.wrapWh;
    if (last >= 0.9 * w && raw <= 0.1 * w) return offset + w;
    return offset + last;
  }
}
