/**
 * Where counter registers wrap and how coarsely they count, from the register types of the
 * SunSpec Information Model Reference (models 103 `WH` acc32 × 10^WH_SF, 160 `DCWH` acc32 ×
 * 10^DCWH_SF, 203 `TotWhImp` acc32 × 10^TotWh_SF, 213 float32, 701 `TotWhInj` uint64 × 10^TotWh_SF)
 * and of YAML profiles (u32 × factor, f32).
 */
import { describe, expect, it } from 'vitest';
import { counterScale, sunspecCounterScale } from '../../src/profiles/counter-scale.js';

describe('counter scales', () => {
  it('an acc32 with scale factor 1 wraps at 2^32 × 10 Wh and counts in 10 Wh steps, not at 2^32 Wh', () => {
    expect(sunspecCounterScale(203, 'TotWhImp', { TotWh_SF: 1 }, 42_000_000_000)).toEqual({
      wrapWh: 2 ** 32 * 10,
      stepWh: 10,
    });
    expect(sunspecCounterScale(103, 'WH', { WH_SF: 0 }, 12_345_675)).toEqual({ wrapWh: 2 ** 32, stepWh: 1 });
  });

  it('repeating blocks take the scale factor of the fixed block (160 DCWH_SF -1: 0.1 Wh steps)', () => {
    const s = sunspecCounterScale(160, 'DCWH', { DCWH_SF: -1 }, 700);
    expect(s?.wrapWh).toBeCloseTo(2 ** 32 / 10, 3);
    expect(s?.stepWh).toBeCloseTo(0.1, 12);
  });

  it('floats and 64-bit counters do not wrap within a lifetime; a float counts relative to its value', () => {
    expect(sunspecCounterScale(213, 'TotWhImp', {}, 2 ** 23)).toEqual({ wrapWh: Infinity, stepWh: 1 });
    expect(sunspecCounterScale(701, 'TotWhInj', { TotWh_SF: 0 }, 5)).toEqual({ wrapWh: 2 ** 64, stepWh: 1 });
    expect(counterScale('f32', 1000, 4_321_251)).toEqual({ wrapWh: Infinity, stepWh: 4_321_251 * 2 ** -23 });
  });

  it('profile registers: u32 in 0.01 kWh wraps at 2^32 × 10 Wh; a signed one wraps nowhere clean', () => {
    expect(counterScale('u32', 10, 5)).toEqual({ wrapWh: 2 ** 32 * 10, stepWh: 10 });
    expect(counterScale('s32', 100, 5)).toEqual({ wrapWh: Infinity, stepWh: 100 });
    expect(sunspecCounterScale(203, 'NoSuchPoint', {}, 5)).toBeUndefined();
    expect(sunspecCounterScale(203, 'TotWhImp', {}, undefined)).toBeUndefined();
  });
});
