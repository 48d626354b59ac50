/**
 * The synthetic day-ahead year against the published 2024 DE-LU statistics it is shaped to (FfE,
 * "Deutsche Strompreise an der Börse EPEX Spot im Jahr 2024"): base 79.6 EUR/MWh, peak (Mon–Fri
 * 08–20) 88.2, off-peak 74.8, almost 460 negative hours, wider daily spreads in summer.
 */
import { describe, expect, it } from 'vitest';
import { dayAheadPrice } from '../../src/sim/day-ahead.js';

describe('synthetic day-ahead prices', () => {
  const start = Date.UTC(2024, 0, 1) - 3_600_000;
  let sum = 0;
  let n = 0;
  let negativeQuarters = 0;
  let peak = 0;
  let peakN = 0;
  const spread = { winter: 0, summer: 0 };
  for (let d = 0; d < 366; d++) {
    let hi = -Infinity;
    let lo = Infinity;
    for (let q = 0; q < 96; q++) {
      const ts = start + (d * 96 + q) * 900_000;
      const p = dayAheadPrice(ts);
      sum += p;
      n++;
      if (p < 0) negativeQuarters++;
      hi = Math.max(hi, p);
      lo = Math.min(lo, p);
      const local = new Date(ts + 3_600_000);
      const wd = local.getUTCDay();
      if (wd >= 1 && wd <= 5 && local.getUTCHours() >= 8 && local.getUTCHours() < 20) {
        peak += p;
        peakN++;
      }
    }
    if (d < 59 || d >= 334) spread.winter += (hi - lo) / 90;
    if (d >= 152 && d < 244) spread.summer += (hi - lo) / 92;
  }
  it('base, peak/base and negative hours as published for 2024', () => {
    expect(sum / n).toBeGreaterThan(79.6 * 0.97);
    expect(sum / n).toBeLessThan(79.6 * 1.03);
    expect(peak / peakN / (sum / n)).toBeGreaterThan(1.08);
    expect(peak / peakN / (sum / n)).toBeLessThan(1.14);
    expect(negativeQuarters / 4).toBeGreaterThan(400);
    expect(negativeQuarters / 4).toBeLessThan(520);
  });
  it('daily spreads wider in summer than in winter', () => {
    expect(spread.summer).toBeGreaterThan(spread.winter);
  });
  it('is a pure function of the instant', () => {
    expect(dayAheadPrice(start + 12_345_678)).toBe(dayAheadPrice(start + 12_345_678));
  });
});
