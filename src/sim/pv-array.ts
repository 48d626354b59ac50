import { itemAt } from '../core/item-at.js';
import type { SimConfig } from './config.js';
import { LatticeLerp } from './lattice-lerp.js';
import { hash01, TimeNoise } from './noise.js';
import { clearSkyPlane } from './solar.js';

/**
 * DC power each optimiser could deliver at its maximum power point: clear-sky plane irradiance ×
 * a cloud factor. Cloud cover is seeded value noise over several time scales (days, hours,
 * minutes) around the configured mean, so the same instant is always equally cloudy; each
 * optimiser adds a little cover noise of its own (a cloud edge crosses the roof unevenly).
 * Cover → irradiance: Kasten & Czeplak (1980), "Solar and terrestrial radiation dependent on the
 * amount and type of cloud", Solar Energy 24: G = G_clear·(1 − 0.75·(N/8)^3.4).
 */
const MIN = 60_000;
const H = 60 * MIN;

export class PvArray {
  private readonly plane: LatticeLerp;
  private readonly scale: Float64Array;
  /** cloud noise over several time scales, each with its weight in the mean cover */
  private readonly octaves: { noise: TimeNoise; weight: number }[];
  private readonly own: TimeNoise[];

  constructor(
    cfg: SimConfig['pv'],
    location: SimConfig['location'],
    private readonly weather: SimConfig['weather'],
    seed: number,
  ) {
    const plane = clearSkyPlane({
      latDeg: location.latDeg,
      lonDeg: location.lonDeg,
      tiltDeg: cfg.tiltDeg,
      azimuthFromSouthDeg: cfg.azimuthFromSouthDeg,
    });
    this.plane = new LatticeLerp(plane, MIN);
    // per-module tolerance: no two strings are exactly alike
    this.scale = Float64Array.from(
      cfg.optimisers,
      (o, i) => (o.peakW * cfg.derate * (0.97 + 0.03 * hash01(seed, 300, i))) / 1000,
    );
    this.octaves = [
      { period: 36 * H, weight: 0.4 },
      { period: 3 * H, weight: 0.3 },
      { period: 40 * MIN, weight: 0.2 },
      { period: 8 * MIN, weight: 0.1 },
    ].map(({ period, weight }, i) => ({ noise: new TimeNoise(seed, 310 + i, period), weight }));
    this.own = cfg.optimisers.map((_, i) => new TimeNoise(seed, 320 + i, 6 * MIN));
  }

  get count(): number {
    return this.scale.length;
  }

  /** mean cloud cover 0..1 at ts, shared by all optimisers */
  cloudCover(ts: number): number {
    const c = this.weather.cloudiness;
    if (c <= 0) return 0;
    const n = this.octaves.reduce((sum, o) => sum + o.weight * o.noise.at(ts), 0);
    // octave sums bunch up around 0.5: stretch back towards the full range
    const spread = Math.min(c, 1.1 - c);
    return clamp01(c + spread * clamp(3.2 * (n - 0.5), -1, 1));
  }

  /** fills out[i] with optimiser i's available DC power, W; returns the sum */
  availableW(ts: number, out: Float64Array): number {
    const g = this.plane.at(ts);
    if (g <= 0) {
      out.fill(0);
      return 0;
    }
    const c = this.weather.cloudiness;
    const cover = this.cloudCover(ts);
    const spread = Math.min(c, 1.1 - c);
    let sum = 0;
    for (let i = 0; i < this.scale.length; i++) {
      const own = c > 0 ? clamp01(cover + 0.25 * spread * (2 * itemAt(this.own, i).at(ts) - 1)) : 0;
      const w = itemAt(this.scale, i) * g * cloudFactor(own);
      out[i] = w;
      sum += w;
    }
    return sum;
  }
}

/** 1 − 0.75·N^3.4 from a table: a pow per optimiser per simulated second was the model's hot spot */
const FACTOR_STEPS = 1024;
const FACTOR = Float64Array.from(
  { length: FACTOR_STEPS + 2 },
  (_, i) => 1 - 0.75 * Math.min(1, i / FACTOR_STEPS) ** 3.4,
);
function cloudFactor(cover: number): number {
  const x = cover * FACTOR_STEPS;
  const i = Math.floor(x);
  const lo = itemAt(FACTOR, i);
  return lo + (itemAt(FACTOR, i + 1) - lo) * (x - i);
}

const clamp = (x: number, lo: number, hi: number) => (x < lo ? lo : x > hi ? hi : x);
const clamp01 = (x: number) => clamp(x, 0, 1);
