import type { CounterScale } from '../core/channels.js';
import type { EnergyState } from '../store/energy-state.js';

/**
 * Whether a device counter's step is energy that flowed, judged against what the device's power
 * could have moved since the counter last moved (docs/design.md "Field faults: what the numbers
 * survive"). A device that reads one spike (an SDM630 import register at 1e9 kWh, a SunSpec
 * acc32 at 4.0e9), steps back (a saved figure restored after a reboot), reads its scale factor
 * wrong for a poll or two, or wraps at its real wrap point (acc32 × 10^SF) leaves the lifetime
 * within what the power explains:
 * - a step up to twice the energy the measured power explains (plus one step of the register's
 *   resolution) is added;
 * - a fall of at most NOISE_WH is read jitter;
 * - a fall that is a plausible step across the counter's wrap point is a wrap;
 * - anything else is held, not added. When CONFIRM_READS reads in a row continue the new figure
 *   plausibly, it was a real reset or replacement: the lifetime continues from its last value and
 *   grows by what the new figure counted since it first appeared. When the old series goes on
 *   instead, the held read was a glitch and is dropped.
 * Where power is unknown (a gap, the gateway was down, a stream without power), the rating
 * stands in: twice the highest power seen on the stream, at least RATING_FLOOR_W; where it is
 * measured, a tenth of the rating at least (UNMEASURED_SHARE).
 */

/** jitter of a counter that reads a little lower once (float registers, rounding) */
const NOISE_WH = 1;
/** power between two polls can exceed both samples (a cloud edge, a kettle): the margin on what they explain */
const POWER_MARGIN = 2;
/** the power assumed where none was measured, at least: a home site's largest device */
export const RATING_FLOOR_W = 20_000;
/**
 * The share of the rating allowed beside the measured power: a meter that counts import per
 * phase moves its counter while the net power reads near 0, and a power register can lag. It
 * costs little: the faults this guards against are steps of 10× or 2^32.
 */
const UNMEASURED_SHARE = 0.1;
/** a power reading above this is a misread, not a device: it does not raise the rating */
const MAX_RATING_W = 10_000_000;
/** reads in a row, the first included, that confirm an implausible step as a real reset or replacement */
export const CONFIRM_READS = 3;
const H = 3_600_000;

export interface CounterJudgeStats {
  /** reads whose step was held as implausible */
  held: number;
  /** new figures confirmed as a reset or replacement */
  rebased: number;
  /** steps taken across the counter's wrap point */
  wraps: number;
}

type Dir = 'in' | 'out';
const KEYS = {
  in: { life: 'inWh', raw: 'rawIn', offset: 'offsetIn', budget: 'budgetIn' },
  out: { life: 'outWh', raw: 'rawOut', offset: 'offsetOut', budget: 'budgetOut' },
} as const;

/** a new figure being watched: where it started, where it is, what the power explained since it last moved */
interface Pending {
  first: number;
  raw: number;
  reads: number;
  budget: number;
}

export class CounterJudge {
  private readonly pending: Record<Dir, Pending | null> = { in: null, out: null };
  private readonly counts: CounterJudgeStats = { held: 0, rebased: 0, wraps: 0 };

  constructor(
    private readonly s: EnergyState,
    private readonly opts: { maxHoldMs: number; wrapWh: number },
  ) {}

  stats(): CounterJudgeStats {
    return { ...this.counts };
  }

  notePower(p: number): void {
    this.s.peakW = Math.max(this.s.peakW, Math.min(Math.abs(p), MAX_RATING_W));
  }

  /**
   * The most energy the device could have moved between the last counter read and `ts`: the
   * larger of the power before and now while a sample holds, the rating for the rest.
   */
  explainedWh(ts: number, before: number | null, now: number | null): number {
    const s = this.s;
    // a state saved before counterTs existed: the last power sample is the nearest known time
    const since = s.counterTs ?? s.heldTs ?? s.integratedUntil;
    if (since === null || !(ts > since)) return 0;
    const dt = ts - since;
    const rating = Math.max(RATING_FLOOR_W, 2 * s.peakW);
    const known = [before, now].filter((v): v is number => v !== null).map(Math.abs);
    if (known.length === 0) return (rating * dt) / H;
    const held = Math.min(dt, this.opts.maxHoldMs);
    return (Math.max(...known, UNMEASURED_SHARE * rating) * held + rating * (dt - held)) / H;
  }

  step(dir: Dir, raw: number, scale: CounterScale | undefined, explained: number): void {
    const s = this.s as unknown as Record<string, number | null>;
    const k = KEYS[dir];
    const last = s[k.raw] as number | null;
    if (last === null) {
      // The first counter is the device's own lifetime figure (a meter reading 4,321.25 kWh
      // reports 4,321,250 Wh at first contact), even when power integration counted a little
      // before it: the max() keeps the series from going back until the counter passes it.
      s[k.offset] = 0;
      this.accept(dir, raw, 0);
      return;
    }
    const resolution = scale?.stepWh ?? 0;
    const allowed = (budget: number) => POWER_MARGIN * budget + resolution + NOISE_WH;
    const budget = (s[k.budget] as number) + explained;
    s[k.budget] = budget;
    const p = this.pending[dir];
    if (p) p.budget += explained;

    let d = raw - last;
    const wrap = scale?.wrapWh ?? this.opts.wrapWh;
    const across = raw + wrap - last;
    const wrapped = d < -NOISE_WH && Number.isFinite(wrap) && across >= 0 && across <= allowed(budget);
    if (wrapped) d = across;
    if (d <= 0 && d >= -NOISE_WH) {
      // the old series goes on (unchanged, or jitter): a figure held before was a glitch
      this.pending[dir] = null;
      return;
    }
    if (d > 0 && d <= allowed(budget)) {
      if (wrapped) {
        this.counts.wraps++;
        s[k.offset] = (s[k.offset] as number) + wrap;
      }
      this.accept(dir, raw, explained);
      return;
    }
    this.counts.held++;
    if (p && raw >= p.raw - NOISE_WH && raw - p.raw <= allowed(p.budget)) {
      p.reads++;
      if (raw > p.raw) {
        p.raw = raw;
        p.budget = explained;
      }
      if (p.reads >= CONFIRM_READS) {
        // a real reset or replacement: the series continues from its last value
        this.counts.rebased++;
        s[k.offset] = (s[k.life] as number) - p.first;
        this.accept(dir, p.raw, explained);
      }
      return;
    }
    this.pending[dir] = { first: raw, raw, reads: 1, budget: 0 };
  }

  /** `raw` is the counter now: lifetime = offset + raw, and the lifetime never goes back */
  private accept(dir: Dir, raw: number, budget: number): void {
    const s = this.s as unknown as Record<string, number | null>;
    const k = KEYS[dir];
    s[k.raw] = raw;
    s[k.budget] = budget;
    s[k.life] = Math.max(s[k.life] as number, (s[k.offset] as number) + raw);
    this.pending[dir] = null;
  }
}
