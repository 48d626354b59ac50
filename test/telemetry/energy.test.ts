import { describe, expect, it } from 'vitest';
import { ACC32_WRAP, EnergyTracker } from '../../src/telemetry/energy.js';

const MIN = 60_000;

describe('EnergyTracker from power', () => {
  it('integrates the held power: positive part in, negative part out', () => {
    const t = new EnergyTracker({ maxHoldMs: 3 * MIN });
    expect(t.knowsIn).toBe(false);
    t.sample(0, 1200); // held for 2 min: 40 Wh in
    t.sample(2 * MIN, -600); // held for 1 min: 10 Wh out
    t.sample(3 * MIN, 0);
    t.advanceTo(10 * MIN);
    expect(t.knowsIn && t.knowsOut).toBe(true);
    expect(t.increment).toBeCloseTo(40, 9);
    expect(t.decrement).toBeCloseTo(-10, 9);
  });

  it('holds a sample for at most maxHold, so a long gap adds only the hold', () => {
    const t = new EnergyTracker({ maxHoldMs: 3 * MIN });
    t.sample(0, 1000);
    t.sample(30 * MIN, 1000); // gap: only 3 min of 1000 W = 50 Wh
    expect(t.increment).toBeCloseTo(50, 9);
  });

  it('counts each stretch once whether advanced in steps or at once', () => {
    const a = new EnergyTracker({ maxHoldMs: 3 * MIN });
    const b = new EnergyTracker({ maxHoldMs: 3 * MIN });
    a.sample(0, 360);
    b.sample(0, 360);
    for (let s = 1; s <= 10; s++) a.advanceTo(s * 15_000);
    b.advanceTo(150_000);
    expect(a.increment).toBeCloseTo(b.increment, 9);
    expect(b.increment).toBeCloseTo(15, 9);
  });
});

describe('EnergyTracker from device counters', () => {
  it('absorbs a device reset once three reads confirm it: the lifetime grows by what is counted after it', () => {
    const t = new EnergyTracker({ maxHoldMs: 3 * MIN });
    const seen: number[] = [];
    for (const [i, raw] of [1000, 1500, 20, 100, 400, 450].entries()) {
      t.sample(i * MIN, undefined, { inWh: raw });
      seen.push(t.increment);
    }
    // 20 is held (a fall), 100 and 400 confirm it: from then on the increments since 20 count
    expect(seen).toEqual([1000, 1500, 1500, 1500, 1880, 1930]);
    expect(t.counterStats).toEqual({ held: 3, rebased: 1, wraps: 0 });
  });

  it('absorbs an acc32 wrap without losing the Wh across the wrap', () => {
    const t = new EnergyTracker({ maxHoldMs: 3 * MIN });
    t.sample(0, undefined, { outWh: ACC32_WRAP - 300 });
    t.sample(MIN, undefined, { outWh: ACC32_WRAP - 6 });
    t.sample(2 * MIN, undefined, { outWh: 100 });
    expect(t.decrement).toBe(-(ACC32_WRAP + 100));
    t.sample(3 * MIN, undefined, { outWh: 150 });
    expect(t.decrement).toBe(-(ACC32_WRAP + 150));
  });

  it("takes the device's own lifetime figure at first contact, even in a sample that also carries power", () => {
    // The figures an independent device served (issue: lifetime counters came out as 0):
    // an SDM630 importing 4,321.25 kWh, a SunSpec meter at TotWhImp 7,000,000 / TotWhExp 2,500,000.
    const sdm = new EnergyTracker({ maxHoldMs: 3 * MIN });
    sdm.sample(0, 850, { inWh: 4_321_250 });
    expect(sdm.increment).toBe(4_321_250);
    const meter = new EnergyTracker({ maxHoldMs: 3 * MIN });
    meter.sample(0, -1200, { inWh: 7_000_000, outWh: 2_500_000 });
    meter.sample(MIN, -1200, { inWh: 7_000_000, outWh: 2_500_020 });
    expect(meter.increment).toBe(7_000_000);
    expect(meter.decrement).toBe(-2_500_020);
  });

  it("jumps to the device's figure when counters appear after integration, then follows them and ignores read jitter", () => {
    const t = new EnergyTracker({ maxHoldMs: 3 * MIN });
    t.sample(0, 600);
    t.sample(MIN, 600, { inWh: 50_000 }); // 10 Wh integrated first; the device's own figure wins
    expect(t.increment).toBe(50_000);
    t.sample(2 * MIN, 600, { inWh: 49_999.5 });
    expect(t.increment).toBe(50_000);
    t.sample(3 * MIN, 600, { inWh: 50_020 });
    expect(t.increment).toBe(50_020);
  });

  it("never goes back when a young device's first counter is below what integration counted", () => {
    const t = new EnergyTracker({ maxHoldMs: 3 * MIN });
    t.sample(0, 600);
    t.sample(MIN, 600, { inWh: 4 }); // 10 Wh integrated, the counter says 4
    expect(t.increment).toBeCloseTo(10, 9);
    t.sample(2 * MIN, 600, { inWh: 25 });
    expect(t.increment).toBe(25);
  });

  it('resumes from serialised state: the held power and the raw counters carry over', () => {
    const a = new EnergyTracker({ maxHoldMs: 3 * MIN });
    a.sample(0, 1200);
    a.sample(MIN, 1200);
    const b = new EnergyTracker({ maxHoldMs: 3 * MIN }, a.state());
    b.sample(2 * MIN, 0); // the 1200 W held since 1 min still counts: 40 Wh in all
    expect(b.increment).toBeCloseTo(40, 9);

    const c = new EnergyTracker({ maxHoldMs: 3 * MIN });
    c.sample(0, undefined, { outWh: 70 });
    const d = new EnergyTracker({ maxHoldMs: 3 * MIN }, c.state());
    d.sample(MIN, undefined, { outWh: 75 });
    expect(d.decrement).toBe(-75);
    d.sample(2 * MIN, undefined, { outWh: 5 }); // reset after restart: held until confirmed
    expect(d.decrement).toBe(-75);
    d.sample(3 * MIN, undefined, { outWh: 6 });
    d.sample(4 * MIN, undefined, { outWh: 10 });
    expect(d.decrement).toBe(-80);
  });
});
