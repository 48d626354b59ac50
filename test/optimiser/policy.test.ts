/**
 * Planning on the load's spread (policy.ts, policy-plan.ts; docs/optimiser.md "Planning on the
 * load's spread"). The policy's dynamic programme is checked against the exact solver (itself
 * checked against glpsol, lp-crosscheck.test.ts) where the spread is one load, and its plan
 * against the plan on one forecast where the spread is wide: on the loads it was made for, it
 * must cost less.
 */
import { describe, expect, it } from 'vitest';
import type { OptimiserCase } from '../../src/optimiser/case.js';
import { optimise, type PlanSlot, type SlotMode } from '../../src/optimiser/plan.js';
import { policyValue, quantileSamples, solvePolicy } from '../../src/optimiser/policy.js';
import { executorX, meterCost, policyPlan } from '../../src/optimiser/policy-plan.js';
import { InfeasibleCaseError, solve } from '../../src/optimiser/solve.js';
import { hash01 } from '../../src/sim/noise.js';
import { dailyCase, randomCase } from './cases.js';

describe('the policy with one load per slot', () => {
  it('values the start at the exact optimum, within the grid’s rounding (0.5 % or 0.01)', () => {
    let checked = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const c = randomCase(seed, 96);
      let exact: number;
      try {
        exact = solve(c).cost;
      } catch (err) {
        if (err instanceof InfeasibleCaseError) continue;
        throw err;
      }
      const p = solvePolicy(c, { loadW: c.loadW.map((l) => [l]) });
      const e0 = (c.battery.socInitial / 100) * c.battery.capacityWh;
      const v = policyValue(p, 0, e0);
      expect(v, `case ${seed}`).toBeGreaterThanOrEqual(exact - 1e-6);
      expect(v - exact, `case ${seed}`).toBeLessThanOrEqual(Math.max(0.01, 0.005 * Math.abs(exact)));
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(8);
  });
});

/** a winter house: 300 W most quarter hours, and in a quarter of them an appliance's 2 kW */
function spikySamples(c: OptimiserCase): number[][] {
  return c.loadW.map((_, t) => Array.from({ length: 20 }, (_, s) => (hash01(7, t, s) < 0.25 ? 2300 : 300)));
}

/** the plan's slots as the executor runs them on each drawn day of loads: the mean cost */
function meanCost(c: OptimiserCase, slots: readonly PlanSlot[], samples: number[][], days: number): number {
  const b = c.battery;
  const bounds = { min: (b.socMin / 100) * b.capacityWh, max: (b.socMax / 100) * b.capacityWh };
  let total = 0;
  for (let d = 0; d < days; d++) {
    let e = (b.socInitial / 100) * b.capacityWh;
    slots.forEach((s, t) => {
      const loadW = samples[t]![Math.floor(hash01(11, d, t) * samples[t]!.length)]!;
      const x = executorX(c, t, bounds, e, s.mode, s.powerW, loadW, c.pvW[t]!);
      total += meterCost(c, t, x, loadW, c.pvW[t]!).cost;
      e += x;
    });
  }
  return total / days;
}

describe('the plan on the load’s spread', () => {
  // two January days: the evening's energy is bought at night, and how much is worth buying
  // depends on the spikes the forecast's mean smears out
  const base = dailyCase(15, 2024, 2);
  const samples = spikySamples(base);
  const mean = samples.map((s) => s.reduce((a, b) => a + b, 0) / s.length);
  const c: OptimiserCase = { ...base, loadW: mean, battery: { ...base.battery, socFinalMin: 10 } };

  it('costs less on those loads than the optimum of their mean', () => {
    const spread = policyPlan(c, { loadW: samples });
    const point = optimise(c);
    const onSpread = meanCost(c, spread.slots, samples, 200);
    const onPoint = meanCost(c, point.slots, samples, 200);
    expect(onSpread).toBeLessThan(onPoint);
  });

  it('uses only the modes the device has, within its power limits', () => {
    const noHold: SlotMode[] = ['charge', 'discharge', 'self-consumption'];
    const plan = policyPlan(c, { loadW: samples }, noHold);
    expect(plan.slots.some((s) => s.mode === 'hold')).toBe(false);
    for (const s of plan.slots) {
      expect(s.powerW).toBeGreaterThanOrEqual(0);
      if (s.mode === 'charge') expect(s.powerW).toBeLessThanOrEqual(c.battery.maxChargeW);
      if (s.mode === 'discharge') expect(s.powerW).toBeLessThanOrEqual(c.battery.maxDischargeW);
      expect(s.socEnd).toBeGreaterThanOrEqual(c.battery.socMin - 1e-9);
      expect(s.socEnd).toBeLessThanOrEqual(c.battery.socMax + 1e-9);
    }
  });

  it('charges from the grid only where the case allows it', () => {
    const dark = { ...c, pvW: c.pvW.map(() => 0), grid: { ...c.grid, gridCharge: false } };
    const plan = policyPlan(dark, { loadW: samples });
    expect(plan.slots.filter((s) => s.mode === 'charge')).toEqual([]);
  });

  it('plans on loads no source can meet without throwing: those slots are as dear as can be', () => {
    const huge = samples.map((s, t) => (t === 40 ? [50_000, ...s] : s));
    const plan = policyPlan(c, { loadW: huge });
    expect(plan.slots).toHaveLength(c.importPrice.length);
  });
});

describe('quantileSamples', () => {
  it('keeps twelve or fewer samples as they are, sorted', () => {
    expect(quantileSamples([5, 1, 3])).toEqual([1, 3, 5]);
  });

  it('folds more into twelve equally likely means with the same mean', () => {
    const s = Array.from({ length: 20 }, (_, k) => (k * 37) % 23);
    const q = quantileSamples(s);
    expect(q).toHaveLength(12);
    const m = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
    expect(Math.min(...q)).toBeGreaterThanOrEqual(Math.min(...s));
    expect(Math.max(...q)).toBeLessThanOrEqual(Math.max(...s));
    expect([...q].sort((a, b) => a - b)).toEqual(q);
    expect(m(q)).toBeCloseTo(m(s), 9);
  });
});
