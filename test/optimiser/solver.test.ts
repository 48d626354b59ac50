/**
 * The solver on cases small enough to solve by hand, the problem's corners (negative prices, no grid
 * charge, full and empty starts, an end SoC out of reach, a load no source can meet), the case's
 * validation and the plan's modes. The optimum on large cases is checked against glpsol in
 * lp-crosscheck.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { InvalidCaseError, type OptimiserCase, parseCase } from '../../src/optimiser/case.js';
import { optimise } from '../../src/optimiser/plan.js';
import { InfeasibleCaseError, solve } from '../../src/optimiser/solve.js';
import { randomCase, violation } from './cases.js';

/** hour slots, no PV, no load, an empty 10 kWh battery, 1 kW each way, 90 % each way */
type Over = Partial<Omit<OptimiserCase, 'battery'>> & { battery?: Partial<OptimiserCase['battery']> };
function small(over: Over = {}): OptimiserCase {
  const base: OptimiserCase = {
    start: '2026-11-27T00:00:00Z',
    slotMinutes: 60,
    importPrice: [0.1, 0.5],
    exportPrice: [0, 0.4],
    pvW: [0, 0],
    loadW: [0, 0],
    battery: {
      capacityWh: 10000,
      socInitial: 0,
      socMin: 0,
      socMax: 100,
      socFinalMin: 0,
      maxChargeW: 1000,
      maxDischargeW: 1000,
      chargeEfficiency: 0.9,
      dischargeEfficiency: 0.9,
      cycleCostPerKWh: 0,
    },
    grid: { maxImportW: 10000, maxExportW: 10000, gridCharge: true },
  };
  return { ...base, ...over, battery: { ...base.battery, ...over.battery } };
}

describe('solver: cases solved by hand', () => {
  it('buys at 0.10, stores 90 %, sells 90 % of that at 0.40', () => {
    // charge 1 kW for an hour: 0.10 paid, 900 Wh stored; discharge 810 W for an hour: 0.324 earned
    const sol = solve(small());
    expect(sol.cost).toBeCloseTo(0.1 - 0.324, 9);
    expect(sol.slots[0]!.chargeW).toBeCloseTo(1000, 6);
    expect(sol.slots[1]!.dischargeW).toBeCloseTo(810, 6);
    expect(sol.slots[1]!.energyEndWh).toBeCloseTo(0, 6);
    expect(violation(small(), sol)).toBeUndefined();
  });

  it('does not cycle when the spread does not pay the losses and the cycle cost', () => {
    // 0.10 → 0.4·0.81 = 0.324 pays; with a cycle cost of 0.3 per discharged kWh it does not
    const sol = solve(small({ battery: { cycleCostPerKWh: 0.3 } }));
    expect(sol.cost).toBeCloseTo(0, 9);
    expect(sol.slots[0]!.chargeW).toBeCloseTo(0, 6);
  });

  it('without grid charging, the same spread earns nothing', () => {
    const c = small({ grid: { maxImportW: 10000, maxExportW: 10000, gridCharge: false } });
    const sol = solve(c);
    expect(sol.cost).toBeCloseTo(0, 9);
    expect(violation(c, sol)).toBeUndefined();
  });

  it('at negative prices it curtails PV and imports for the load instead of paying to export', () => {
    // one hour: PV 5 kW, load 1 kW, import −0.10, export −0.20, battery full: the cheapest is to
    // import the load (earning 0.10) and use no PV; exporting would cost 0.20 a kWh
    const c = small({
      importPrice: [-0.1],
      exportPrice: [-0.2],
      pvW: [5000],
      loadW: [1000],
      battery: { socInitial: 100, cycleCostPerKWh: 0.02, chargeEfficiency: 0.95, dischargeEfficiency: 0.95 },
      grid: { maxImportW: 3000, maxExportW: 10000, gridCharge: true },
    });
    const sol = solve(c);
    expect(sol.cost).toBeCloseTo(-0.1, 9);
    expect(sol.slots[0]!.pvUsedW).toBeCloseTo(0, 6);
    expect(sol.slots[0]!.importW).toBeCloseTo(1000, 6);
    expect(sol.slots[0]!.exportW).toBeCloseTo(0, 6);
  });

  it('an empty battery with a fuse below the load charges ahead to cover the peak', () => {
    // slot 1 needs 3 kW with a 2 kW fuse: 1 kW from the battery, i.e. 1111 Wh stored in slot 0
    const c = small({
      battery: { maxChargeW: 1500 },
      importPrice: [0.3, 0.3],
      exportPrice: [0, 0],
      loadW: [500, 3000],
      grid: { maxImportW: 2000, maxExportW: 0, gridCharge: true },
    });
    const sol = solve(c);
    expect(sol.slots[0]!.chargeW).toBeGreaterThan(0);
    expect(sol.slots[1]!.importW).toBeCloseTo(2000, 6);
    expect(sol.slots[1]!.dischargeW).toBeCloseTo(1000, 6);
    expect(violation(c, sol)).toBeUndefined();
  });

  it('a full start sells into the peak down to the end SoC', () => {
    const c = small({
      battery: { socInitial: 100, socFinalMin: 50 },
      importPrice: [0.2, 0.2],
      exportPrice: [0.1, 0.4],
    });
    const sol = solve(c);
    expect(sol.slots[1]!.dischargeW).toBeCloseTo(1000, 6);
    expect(sol.slots[1]!.energyEndWh).toBeGreaterThanOrEqual(5000 - 1e-6);
  });
});

describe('solver: infeasible cases are refused with a reason', () => {
  it('an end SoC out of reach', () => {
    const c = small({ battery: { socFinalMin: 50 } });
    expect(() => solve(c)).toThrow(InfeasibleCaseError);
    expect(() => solve(c)).toThrow(/socFinalMin 50 % is out of reach: .* at most 18 %/);
  });

  it('a load more than PV, import and discharge together', () => {
    const c = small({ loadW: [20000, 0] });
    expect(() => solve(c)).toThrow(/slot 0: load 20000 W is more than PV 0 W \+ maxImportW 10000 W/);
  });

  it('a load that needs an empty battery', () => {
    const c = small({ loadW: [10500, 0], battery: { socInitial: 0 } });
    expect(() => solve(c)).toThrow(/slot 0: load 10500 W needs the battery to discharge/);
  });
});

describe('solver: generated cases keep every rule', () => {
  it('40 generated 48-hour cases: feasible slot by slot, or refused', () => {
    let solved = 0;
    for (let k = 0; k < 40; k++) {
      const c = randomCase(1000 + k);
      try {
        const sol = solve(c);
        expect(violation(c, sol), `case ${k}`).toBeUndefined();
        solved++;
      } catch (err) {
        expect(err).toBeInstanceOf(InfeasibleCaseError);
      }
    }
    expect(solved).toBeGreaterThan(20);
  });
});

describe('case validation', () => {
  const bad = (mutate: (c: any) => void) => {
    const c: any = structuredClone(small());
    mutate(c);
    return () => parseCase(c);
  };
  it.each([
    ['a missing field', (c: any) => delete c.battery.capacityWh, /\/battery\/capacityWh/],
    ['an unknown field', (c: any) => (c.grid.fuse = 3), /\/grid\/fuse/],
    ['a negative load', (c: any) => (c.loadW[0] = -5), /\/loadW\/0/],
    ['a text price', (c: any) => (c.importPrice[1] = '0.3'), /\/importPrice\/1/],
    ['NaN-like nulls', (c: any) => (c.pvW[0] = null), /\/pvW\/0/],
    ['unequal lengths', (c: any) => c.pvW.push(0), /\/pvW: 3 values, but importPrice has 2/],
    [
      'socMin above socMax',
      (c: any) => Object.assign(c.battery, { socMin: 90, socMax: 80, socInitial: 85 }),
      /socMin 90 is above socMax 80/,
    ],
    [
      'socInitial below socMin',
      (c: any) => Object.assign(c.battery, { socMin: 20 }),
      /socInitial: 0 is outside socMin..socMax/,
    ],
    ['an efficiency above 1', (c: any) => (c.battery.chargeEfficiency = 1.2), /chargeEfficiency/],
    ['a start that is not a date', (c: any) => (c.start = 'tomorrow'), /\/start: 'tomorrow'/],
  ])('%s is refused', (_, mutate, message) => {
    const f = bad(mutate);
    expect(f).toThrow(InvalidCaseError);
    expect(f).toThrow(message);
  });
  it('JSON that is not an object is refused', () => {
    for (const v of [[], null, 3, 'case']) expect(() => parseCase(v)).toThrow(InvalidCaseError);
  });
  it('a fuse below a load the battery cannot cover is refused as infeasible, with the slot', () => {
    const c = small({ importPrice: [0.3, 0.3], exportPrice: [0, 0], loadW: [500, 3000] });
    c.grid = { maxImportW: 2000, maxExportW: 0, gridCharge: true };
    // 1 kW charge stores 900 Wh; a 1 kW discharge for an hour needs 1111 Wh
    expect(() => solve(c)).toThrow(
      /slot 1: load 3000 W needs the battery to discharge, but it can hold no more than 9 %/,
    );
  });
  it('a valid case passes unchanged', () => {
    expect(parseCase(small())).toEqual(small());
  });
});

describe('the plan', () => {
  it('slots, modes, powers, SoC at the end, cost and baseline', () => {
    const plan = optimise(small());
    expect(plan.slots).toEqual([
      { interval: '2026-11-27T00:00:00Z/2026-11-27T01:00:00Z', mode: 'charge', powerW: 1000, socEnd: 9 },
      { interval: '2026-11-27T01:00:00Z/2026-11-27T02:00:00Z', mode: 'discharge', powerW: 810, socEnd: 0 },
    ]);
    expect(plan.cost).toBe(-0.224);
    expect(plan.baselineCost).toBe(0);
  });

  it('a slot that does what self-consumption would do is sent as self-consumption', () => {
    // PV 3 kW over a 1 kW load: self-consumption charges the 1 kW surplus (the battery's limit);
    // the optimum does the same, then holds the energy for the dear evening (buying at 0.5 to store
    // for 0.6 loses: 0.5 / 0.81 > 0.6)
    const c = small({
      importPrice: [0.3, 0.5, 0.6],
      exportPrice: [0.05, 0.05, 0.05],
      pvW: [3000, 0, 0],
      loadW: [1000, 200, 1000],
    });
    const plan = optimise(c);
    expect(plan.slots.map((s) => s.mode)).toEqual(['self-consumption', 'hold', 'self-consumption']);
    expect(plan.cost).toBeLessThan(plan.baselineCost);
  });

  it('a discharge into the house’s load that exports nothing is sent as self-consumption; one that exports is not', () => {
    // 800 Wh stored, 500 W at most: the dearer hour takes 500 W (555.6 Wh), the cheaper one the
    // remaining 244.4 Wh as 220 W, less than self-consumption's 500 W: still a discharge into the
    // house only, so the battery follows the real load there rather than the forecast's mean
    const battery = { socInitial: 8, maxDischargeW: 500 };
    const home = optimise(small({ importPrice: [0.5, 0.6], exportPrice: [0, 0], loadW: [1000, 1000], battery }));
    expect(home.slots.map((s) => s.mode)).toEqual(['self-consumption', 'self-consumption']);
    expect(home.slots[0]!.socEnd).toBeCloseTo(5.56, 2);
    // the same energy sold in the second hour at 0.6: that slot exports, a discharge at its power
    const sold = optimise(small({ importPrice: [0.5, 0.7], exportPrice: [0, 0.6], loadW: [1000, 0], battery }));
    expect(sold.slots.map((s) => s.mode)).toEqual(['self-consumption', 'discharge']);
    expect(sold.slots[1]!.powerW).toBe(500);
  });
});
