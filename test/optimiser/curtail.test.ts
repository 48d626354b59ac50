/**
 * The site's limits and negative export prices in the optimiser's problem (docs/optimiser.md "Limits
 * and curtailment"), on cases solved by hand: the battery takes the surplus before PV is curtailed,
 * PV is curtailed only for a limit or a negative export price, and never more than either needs. The
 * optimum on large cases with limits is checked against glpsol in lp-crosscheck.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { InvalidCaseError, type OptimiserCase, parseCase } from '../../src/optimiser/case.js';
import { optimise } from '../../src/optimiser/plan.js';
import { solve } from '../../src/optimiser/solve.js';
import { violation } from './cases.js';

/**
 * Hour slots: a sunny one (5 kW of PV, 500 W of load) and an evening one (4 kW of load, dear), an
 * empty 10 kWh battery taking 3 kW, lossless: what it stores at noon the evening uses
 */
function sunny(over: Partial<OptimiserCase> = {}, socInitial = 0): OptimiserCase {
  return parseCase({
    start: '2026-06-01T10:00:00Z',
    slotMinutes: 60,
    importPrice: [0.3, 0.4],
    exportPrice: [0.05, 0.05],
    pvW: [5000, 0],
    loadW: [500, 4000],
    battery: {
      capacityWh: 10000,
      socInitial,
      socMin: 0,
      socMax: 100,
      socFinalMin: 0,
      maxChargeW: 3000,
      maxDischargeW: 3000,
      chargeEfficiency: 1,
      dischargeEfficiency: 1,
      cycleCostPerKWh: 0,
    },
    grid: { maxImportW: 11000, maxExportW: 11000, gridCharge: true },
    ...over,
  });
}

const first = (c: OptimiserCase) => {
  const sol = solve(c);
  expect(violation(c, sol)).toBeUndefined();
  return sol.slots[0]!;
};

describe('optimiser: limits and curtailment', () => {
  it('a negative export price: the battery takes the surplus first, the rest is curtailed, nothing exported', () => {
    const s = first(sunny({ exportPrice: [-0.1, 0.05] }));
    expect(s.chargeW).toBeCloseTo(3000, 6);
    expect(s.exportW).toBeCloseTo(0, 6);
    expect(s.curtailedW).toBeCloseTo(1500, 6);
    const plan = optimise(sunny({ exportPrice: [-0.1, 0.05] }));
    // self-consumption charges the 3 kW surplus anyway: the plan sends that, and says what is curtailed
    expect(plan.slots[0]).toMatchObject({ mode: 'self-consumption', curtailW: 1500 });
    expect(plan.slots[1]!.curtailW).toBeUndefined();
  });

  it('a positive export price: nothing curtailed, the surplus the battery leaves is exported', () => {
    const s = first(sunny());
    expect(s.curtailedW).toBeCloseTo(0, 6);
    expect(s.chargeW).toBeCloseTo(3000, 6);
    expect(s.exportW).toBeCloseTo(1500, 6);
    expect(optimise(sunny()).slots[0]!.curtailW).toBeUndefined();
  });

  it('an export price of 0: exporting for nothing still beats curtailing', () => {
    const s = first(sunny({ exportPrice: [0, 0.05] }, 100));
    expect(s.curtailedW).toBeCloseTo(0, 6);
    expect(s.exportW).toBeCloseTo(4500, 6);
  });

  it('an export limit: exactly the surplus over the limit and the battery is curtailed', () => {
    const limits = { exportW: [1000, null] };
    const s = first(sunny({ limits }));
    expect(s.chargeW).toBeCloseTo(3000, 6);
    expect(s.exportW).toBeCloseTo(1000, 6);
    expect(s.curtailedW).toBeCloseTo(500, 6);
    // a full battery takes nothing: the limit alone curtails
    const full = first(sunny({ limits }, 100));
    expect(full.exportW).toBeCloseTo(1000, 6);
    expect(full.curtailedW).toBeCloseTo(3500, 6);
  });

  it('zero export where the battery would rather export: the battery is charged instead of the PV curtailed', () => {
    // with 0.25 paid for export now and 0.2 for import later the plan would export; the limit keeps it home
    const prices = { importPrice: [0.3, 0.2], exportPrice: [0.25, 0.05] };
    const free = first(sunny(prices));
    expect(free.exportW).toBeCloseTo(4500, 6);
    expect(free.chargeW).toBeCloseTo(0, 6);
    const held = first(sunny({ ...prices, limits: { exportW: [0, null] } }));
    expect(held.exportW).toBeCloseTo(0, 6);
    expect(held.chargeW).toBeCloseTo(3000, 6);
    expect(held.curtailedW).toBeCloseTo(1500, 6);
  });

  it('negativeExportPrice ignore: the site exports at the negative price, so the plan does not curtail for it', () => {
    const s = first(sunny({ exportPrice: [-0.1, 0.05], limits: { negativeExportPrice: 'ignore' } }));
    expect(s.curtailedW).toBeCloseTo(0, 6);
    expect(s.chargeW).toBeCloseTo(3000, 6);
    expect(s.exportW).toBeCloseTo(1500, 6);
  });

  it('a generation limit caps the PV used', () => {
    const s = first(sunny({ limits: { generationW: [2000, null] } }, 100));
    expect(s.pvUsedW).toBeCloseTo(2000, 6);
    expect(s.curtailedW).toBeCloseTo(3000, 6);
  });

  it("an import limit caps the battery's grid charge, never the house's own import", () => {
    const night = sunny(
      { pvW: [0, 0], loadW: [1500, 2000], importPrice: [0.1, 0.5], limits: { importW: [1000, null] } },
      0,
    );
    const s = first(night);
    // the house's 1.5 kW is over the limit and imported anyway; nothing charged on top
    expect(s.importW).toBeCloseTo(1500, 6);
    expect(s.chargeW).toBeCloseTo(0, 6);
    const roomy = first({ ...night, limits: { importW: [2500, null] } });
    expect(roomy.importW).toBeCloseTo(2500, 6);
    expect(roomy.chargeW).toBeCloseTo(1000, 6);
  });

  it('limits per slot must have one value per slot', () => {
    expect(() => sunny({ limits: { exportW: [0] } })).toThrow(InvalidCaseError);
    expect(() => sunny({ limits: { exportW: [0] } })).toThrow('/limits/exportW: 1 values, but importPrice has 2');
    expect(() => sunny({ limits: { exportW: [-1, 0] } })).toThrow(InvalidCaseError);
  });
});
