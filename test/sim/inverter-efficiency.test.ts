import { describe, expect, it } from 'vitest';
import { defaultSimConfig, SimConfigError } from '../../src/sim/config.js';
import { InverterConversion } from '../../src/sim/inverter-efficiency.js';

const curve = defaultSimConfig().inverter.efficiencyCurve;

describe('InverterConversion', () => {
  const inv = new InverterConversion(6000, 6, curve);

  it('is ~96 % at mid load, worse at low load, and pays standby at zero', () => {
    expect(inv.efficiency(3000)).toBeGreaterThan(0.955);
    expect(inv.efficiency(3000)).toBeLessThan(0.975);
    expect(inv.efficiency(150)).toBeLessThan(inv.efficiency(3000) - 0.03);
    expect(inv.acFromDc(0)).toBe(-6);
    expect(inv.acFromDc(3000)).toBeCloseTo(3000 * inv.efficiency(3000) - 6, 9);
  });

  it('costs more AC than it stores when converting AC to DC', () => {
    expect(inv.acFromDc(-2000)).toBeLessThan(-2000);
  });

  it('inverts exactly in both directions and on every segment', () => {
    for (let dc = -7000; dc <= 7000; dc += 37.3) {
      expect(inv.dcForAc(inv.acFromDc(dc))).toBeCloseTo(dc, 6);
    }
  });

  it('refuses a curve whose output falls as its input rises', () => {
    expect(
      () =>
        new InverterConversion(6000, 6, [
          [0, 0.9],
          [0.1, 0.95],
          [0.2, 0.3],
        ]),
    ).toThrow(SimConfigError);
  });
});
