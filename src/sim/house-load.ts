import { IANAZone } from 'luxon';
import { itemAt } from '../core/item-at.js';
import type { SimConfig } from './config.js';
import { LatticeLerp } from './lattice-lerp.js';
import { hash01, TimeNoise } from './noise.js';

/**
 * The house's demand in W as a pure function of time: base load wandering slowly, a fridge
 * compressor cycling, morning/lunch/evening peaks on local clock time (later on weekends), and
 * appliances (kettle, oven, washing machine...) that switch on in seeded 10-minute slots.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const SLOT = 10 * 60_000;
/** the longest appliance run must fit in this many slots looking back */
const LOOKBACK_SLOTS = 5;
const OFFSET_WINDOW = 15 * 60_000;

const APPLIANCES: ReadonlyArray<{ w: number; minutes: number }> = [
  { w: 2000, minutes: 3 }, // kettle
  { w: 1100, minutes: 4 }, // microwave
  { w: 2200, minutes: 35 }, // oven
  { w: 2000, minutes: 20 }, // washing machine heating
  { w: 1800, minutes: 25 }, // dishwasher heating
  { w: 1500, minutes: 8 }, // hair dryer
  { w: 1200, minutes: 15 }, // vacuum cleaner
];

const gauss = (x: number, mu: number, sigma: number) => {
  const z = (x - mu) / sigma;
  return Math.exp(-0.5 * z * z);
};

export class HouseLoad {
  private readonly zone: IANAZone;
  /** UTC offset per quarter hour, few entries live at once */
  private readonly offsets = new Map<number, number>();
  private readonly fridgePhaseMs: number;
  private readonly baseNoise: TimeNoise;
  private readonly peaks: LatticeLerp;
  /** appliance runs that can touch the current slot, refreshed when the slot changes */
  private runsSlot = Number.NaN;
  private runs: { start: number; end: number; w: number }[] = [];

  constructor(
    private readonly cfg: SimConfig['house'],
    private readonly seed: number,
    timezone: string,
  ) {
    this.zone = IANAZone.create(timezone);
    this.fridgePhaseMs = hash01(seed, 100, 0) * 2_700_000;
    this.baseNoise = new TimeNoise(seed, 101, 20 * 60_000);
    this.peaks = new LatticeLerp((t) => this.peaksW(t), 60_000);
  }

  /** local wall-clock ms (a DST offset holds for whole quarter hours in every zone) */
  localMs(ts: number): number {
    const key = Math.floor(ts / OFFSET_WINDOW);
    let off = this.offsets.get(key);
    if (off === undefined) {
      if (this.offsets.size > 32) this.offsets.clear();
      off = this.zone.offset(key * OFFSET_WINDOW) * 60_000;
      this.offsets.set(key, off);
    }
    return ts + off;
  }

  demandW(ts: number): number {
    let w = this.cfg.baseW * (0.85 + 0.3 * this.baseNoise.at(ts)) + this.peaks.at(ts);
    if ((ts + this.fridgePhaseMs) % 2_700_000 < 900_000) w += 90;
    if (this.cfg.applianceRate > 0) w += this.appliancesW(ts);
    return w;
  }

  /** the smooth daily shape: cooking, lights, people at home */
  private peaksW(ts: number): number {
    const { cfg, seed } = this;
    const local = this.localMs(ts);
    const day = Math.floor(local / DAY);
    const h = (local - day * DAY) / HOUR;
    const weekday = (((day + 4) % 7) + 7) % 7; // 1970-01-01 was a Thursday
    const weekend = weekday === 0 || weekday === 6;
    const dayMood = 0.7 + 0.6 * hash01(seed, 102, day);
    return (
      cfg.morningPeakW * dayMood * gauss(h, weekend ? 9 : 7, 0.75) +
      0.4 * cfg.morningPeakW * (weekend ? 1.5 : 1) * gauss(h, 12.5, 0.6) +
      cfg.eveningPeakW * dayMood * gauss(h, 19, 1.5)
    );
  }

  private appliancesW(ts: number): number {
    const k0 = Math.floor(ts / SLOT);
    if (k0 !== this.runsSlot) this.loadRuns(k0);
    let w = 0;
    for (const r of this.runs) if (ts >= r.start && ts < r.end) w += r.w;
    return w;
  }

  private loadRuns(k0: number): void {
    this.runsSlot = k0;
    this.runs = [];
    for (let k = k0 - LOOKBACK_SLOTS; k <= k0; k++) {
      // judged on the slot's own hour, so a run that started stays on until it ends
      const slotLocal = this.localMs(k * SLOT);
      const slotHour = (((slotLocal % DAY) + DAY) % DAY) / HOUR;
      const awake = slotHour < 6 || slotHour >= 23 ? 0.1 : 1; // people sleep
      if (hash01(this.seed, 200, k) >= Math.min(1, 0.12 * this.cfg.applianceRate * awake)) continue;
      const a = itemAt(APPLIANCES, Math.floor(hash01(this.seed, 201, k) * APPLIANCES.length));
      const start = k * SLOT + hash01(this.seed, 202, k) * SLOT;
      this.runs.push({ start, end: start + a.minutes * 60_000, w: a.w });
    }
  }
}
