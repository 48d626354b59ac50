/**
 * The curtailed power's upper bound (src/limits/status.ts): nothing held back without a cap or
 * while the inverters deliver less than it; the rating less the cap while they deliver it.
 */
import { describe, expect, it } from 'vitest';
import { AT_CAP_FRACTION, curtailedW } from '../../src/limits/status.js';

describe('curtailedW', () => {
  it('is 0 unlimited, with a cap at or over the rating, and with no rating', () => {
    expect(curtailedW(null, 6000, 6000)).toBe(0);
    expect(curtailedW(6000, 6000, 6000)).toBe(0);
    expect(curtailedW(1000, 0, 0)).toBe(0);
  });

  it('is 0 while the inverters deliver less than the cap: the PV is below it', () => {
    expect(curtailedW(3000, 6000, 3000 - AT_CAP_FRACTION * 6000 - 1)).toBe(0);
  });

  it('is the rating less the cap while they deliver the cap (a lagging output within 1 % of the rating counts)', () => {
    expect(curtailedW(3000, 6000, 3000)).toBe(3000);
    expect(curtailedW(3000, 6000, 3000 - AT_CAP_FRACTION * 6000)).toBe(3000);
    // a cap of 0 (zero generation): everything is held back
    expect(curtailedW(0, 6000, 0)).toBe(6000);
  });
});
