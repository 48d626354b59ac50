/**
 * The limits loop's step (src/limits/controller.ts) in closed loop with a plant: an inverter whose
 * output follows its limit one step (one second) late, PV it cannot exceed, a house, a battery on
 * its DC side that charges the surplus it can take. Steps in the limit and in the house; the
 * settle time is counted in steps, never measured on a clock.
 */
import { describe, expect, it } from 'vitest';
import {
  decideLimits,
  failSafeCommands,
  houseOf,
  type LoopInput,
  MARGIN_FRACTION,
} from '../../src/limits/controller.js';
import type { LimitsInForce } from '../../src/limits/sources.js';

const RATED = 6000;

interface Plant {
  pvW: number;
  houseW: number;
  /** the limit the inverter follows now (set one step after the command) */
  limitW: number | null;
  /** the hybrid's battery on its DC side, in self-consumption: it charges the PV over the house, up to this */
  batteryMaxW: number;
}

/** the plant's flows: the battery takes the surplus over the house; output = min(PV − battery, limit) */
function flows(p: Plant) {
  const bat = Math.min(p.batteryMaxW, Math.max(0, p.pvW - p.houseW));
  const ac = Math.min(p.pvW - bat, p.limitW ?? Number.POSITIVE_INFINITY, RATED);
  // a limit below the house: PV the inverter cannot deliver goes to the battery while it can take it
  const extra = Math.min(p.batteryMaxW - bat, p.pvW - bat - ac);
  return { acW: ac, gridW: p.houseW - ac, batW: bat + extra, pvUsedW: ac + bat + extra };
}

/** runs `steps` of the loop as the feature does (the poll before, the house held); each command reaches the inverter one step later */
function run(p: Plant, limits: (step: number) => LimitsInForce, steps: number) {
  const trace: { gridW: number; acW: number; batW: number; pvUsedW: number; capW: number | null }[] = [];
  let pending: number | null | undefined;
  let houseBeforeW: number | undefined;
  let houseHeldW: number | undefined;
  for (let k = 0; k < steps; k++) {
    if (pending !== undefined) p.limitW = pending;
    const f = flows(p);
    const input: LoopInput = {
      limits: limits(k),
      gridW: f.gridW,
      inverters: [{ id: 'inv', ratedW: RATED, acW: f.acW }],
      houseBeforeW,
      houseHeldW: houseBeforeW === undefined ? undefined : houseHeldW,
    };
    const d = decideLimits(input);
    houseBeforeW = houseOf(f.gridW, input.inverters);
    houseHeldW = d.houseW;
    const c = d.commands[0]!.command;
    pending = c.kind === 'limit' ? c.watts : null;
    trace.push({ ...f, capW: d.capW });
  }
  return trace;
}

const exportAt = (w: number): LimitsInForce => ({ exportW: { watts: w, source: 'site.yaml' } });

describe('the step response', () => {
  it('a step of the export limit from none to 0 W settles within 5 steps, overshoot under 1 % of the rating', () => {
    const p: Plant = { pvW: 5000, houseW: 800, limitW: null, batteryMaxW: 0 };
    const trace = run(p, (k) => (k < 3 ? {} : exportAt(0)), 20);
    expect(-trace[2]!.gridW).toBeCloseTo(4200, 0);
    const after = trace.slice(3);
    const settled = after.findIndex((_, i) => after.slice(i).every((u) => -u.gridW <= 0.01 * RATED));
    expect(settled).toBeGreaterThanOrEqual(0);
    expect(settled).toBeLessThanOrEqual(5);
    // after settling, export never exceeds the limit by more than 1 % of the rating
    for (const t of after.slice(settled)) expect(-t.gridW).toBeLessThanOrEqual(0.01 * RATED);
  });

  it('a step of the house down under a held limit settles within 5 steps', () => {
    const p: Plant = { pvW: 5000, houseW: 3000, limitW: null, batteryMaxW: 0 };
    const trace = run(
      p,
      (k) => {
        if (k === 10) p.houseW = 500;
        return exportAt(1000);
      },
      25,
    );
    const after = trace.slice(10);
    const settled = after.findIndex((_, i) => after.slice(i).every((u) => -u.gridW <= 1000 + 0.01 * RATED));
    expect(settled).toBeLessThanOrEqual(5);
    expect(-trace.at(-1)!.gridW).toBeGreaterThan(1000 - 2 * MARGIN_FRACTION * RATED);
  });
});

describe('a poll caught mid-step', () => {
  // a house of 1000 W held at zero export; one inverter delivers 950 W
  const at = (gridW: number, houseBeforeW?: number, houseHeldW?: number) =>
    decideLimits({
      limits: exportAt(0),
      gridW,
      inverters: [{ id: 'inv', ratedW: RATED, acW: 950 }],
      houseBeforeW,
      houseHeldW,
    });
  const margin = MARGIN_FRACTION * RATED;

  it('does not move the cap: the output stepped between the meter’s and the inverter’s readings, either way', () => {
    // the meter read after a step down of 2 kW, the inverter before it: a house 2 kW too big
    expect(at(2050, 1000, 1000).capW).toBe(1000 - margin);
    // the meter read before a step up, the inverter after: a house too small
    expect(at(-1950, 1000, 1000).capW).toBe(1000 - margin);
  });

  it('a house that changed is followed once two polls agree, at the nearer of the two', () => {
    expect(at(2050, 3000, 1000).capW).toBe(3000 - margin);
    expect(at(-450, 300, 1000).capW).toBe(500 - margin);
  });

  it('with nothing decided yet, the lower house of the two polls', () => {
    expect(at(2050, 1200).capW).toBe(1200 - margin);
    expect(at(2050).capW).toBe(3000 - margin);
  });
});

describe('an inverter that stopped answering', () => {
  it('is left out: the others may deliver house + limit of their own readings, and a generation limit less its last output', () => {
    const d = decideLimits({
      limits: { ...exportAt(0), generationW: { watts: 3000, source: 'site.yaml' } },
      // the silent inverter's 2 kW are in the meter's reading: 1000 W house − 2000 − 500
      gridW: -1500,
      inverters: [{ id: 'b', ratedW: RATED, acW: 500 }],
      silentW: 2000,
    });
    // house + limit of b's own reading: −1500 + 500 − margin, below 0: b at 0
    expect(d.commands).toEqual([{ id: 'b', command: { kind: 'limit', watts: 0 } }]);
    const g = decideLimits({
      limits: { generationW: { watts: 3000, source: 'site.yaml' } },
      gridW: -1500,
      inverters: [{ id: 'b', ratedW: RATED, acW: 500 }],
      silentW: 2000,
    });
    expect(g.commands).toEqual([{ id: 'b', command: { kind: 'limit', watts: 1000 } }]);
  });
});

describe('never more than the limit needs', () => {
  it('PV below what the limit allows is not curtailed at all', () => {
    const p: Plant = { pvW: 1500, houseW: 800, limitW: null, batteryMaxW: 0 };
    const trace = run(p, () => exportAt(1000), 10);
    for (const t of trace) expect(t.acW).toBe(1500);
  });

  it('held at the limit, the export is the limit less the margin, not less', () => {
    const p: Plant = { pvW: 5000, houseW: 800, limitW: null, batteryMaxW: 0 };
    const trace = run(p, () => exportAt(2000), 10);
    expect(-trace.at(-1)!.gridW).toBeCloseTo(2000 - MARGIN_FRACTION * RATED, -1);
  });

  it('a generation limit caps the output whatever the house draws', () => {
    const d = decideLimits({
      limits: { generationW: { watts: 3000, source: 'grid-operator' } },
      gridW: -1000,
      inverters: [
        { id: 'a', ratedW: 4000, acW: 2500 },
        { id: 'b', ratedW: 2000, acW: 1500 },
      ],
    });
    expect(d.binding).toEqual({ limit: 'generationW', watts: 3000, source: 'grid-operator' });
    // shared by rating: 2000 and 1000
    expect(d.commands.map((c) => c.command)).toEqual([
      { kind: 'limit', watts: 2000 },
      { kind: 'limit', watts: 1000 },
    ]);
  });

  it('no limit in force, or a cap above the rating: every inverter unlimited', () => {
    const base = { gridW: -500, inverters: [{ id: 'a', ratedW: RATED, acW: 1500 }] };
    expect(decideLimits({ ...base, limits: {} }).commands[0]!.command).toEqual({ kind: 'none' });
    expect(decideLimits({ ...base, limits: exportAt(8000) }).commands[0]!.command).toEqual({ kind: 'none' });
  });
});

describe('battery first', () => {
  it('a battery that takes the surplus is not curtailed: no PV is lost while it charges', () => {
    const p: Plant = { pvW: 4000, houseW: 500, limitW: null, batteryMaxW: 5000 };
    const trace = run(p, () => exportAt(0), 10);
    for (const t of trace) {
      expect(t.pvUsedW).toBeCloseTo(4000, 6);
      expect(-t.gridW).toBeLessThanOrEqual(0.01 * RATED);
    }
    expect(trace.at(-1)!.batW).toBeGreaterThan(3400);
  });

  it('PV is curtailed only for the surplus the battery cannot take', () => {
    const p: Plant = { pvW: 5500, houseW: 500, limitW: null, batteryMaxW: 3000 };
    const trace = run(p, () => exportAt(0), 10);
    const last = trace.at(-1)!;
    expect(last.batW).toBe(3000);
    // the house (less the margin) from PV, the battery full on: 2000 W curtailed, not more
    expect(last.pvUsedW).toBeCloseTo(3500 - MARGIN_FRACTION * RATED, 6);
  });
});

describe('import', () => {
  it('an import over importW is reported; limits never command a discharge', () => {
    const d = decideLimits({
      limits: { importW: { watts: 3000, source: 'schedule' } },
      gridW: 4200,
      inverters: [{ id: 'a', ratedW: RATED, acW: 0 }],
    });
    expect(d.importOverW).toBe(1200);
    expect(d.commands[0]!.command).toEqual({ kind: 'none' });
  });
});

describe('the fail-safe', () => {
  it('is shared by rating', () => {
    expect(
      failSafeCommands(
        [
          { id: 'a', ratedW: 3000 },
          { id: 'b', ratedW: 1000 },
        ],
        2000,
      ).map((c) => c.command),
    ).toEqual([
      { kind: 'limit', watts: 1500 },
      { kind: 'limit', watts: 500 },
    ]);
  });
});

describe('a site with an output-limited inverter and one with its own export limiter', () => {
  /**
   * A (6 kW) is held through its output limit by this loop, a step late; B (5 kW, its own meter at
   * the same connection) holds the export itself to the limit it is written, within the step (an
   * own limiter reacts well inside the loop's second). B's array may give less than its rating's
   * share of the cap: a shaded roof, a smaller string.
   */
  function mixed(bPvW: number, steps: number) {
    const houseW = 500;
    const limit = exportAt(3000);
    let aLimit: number | null = null;
    const trace: { exportW: number; aW: number; bW: number }[] = [];
    for (let k = 0; k < steps; k++) {
      const aOut = Math.min(6000, aLimit ?? Number.POSITIVE_INFINITY);
      const bOut = Math.max(0, Math.min(bPvW, 5000, houseW + limit.exportW!.watts - aOut));
      const gridW = houseW - aOut - bOut;
      const d = decideLimits({
        limits: limit,
        gridW,
        inverters: [
          { id: 'a', ratedW: 6000, acW: aOut },
          { id: 'b', ratedW: 5000, acW: bOut, ownLimiter: true },
        ],
      });
      const c = d.commands.find((x) => x.id === 'a')!.command;
      aLimit = c.kind === 'limit' ? c.watts : null;
      trace.push({ exportW: -gridW, aW: aOut, bW: bOut });
    }
    return trace;
  }

  it('holds the export at the limit, not under it: B’s output is taken from the cap, A gets the rest', () => {
    const t = mixed(800, 30);
    const end = t.at(-1)!;
    // never more than the limit needs: the export is the limit less the margin (0.5 % of 11 kW)
    expect(end.exportW).toBeGreaterThan(3000 - MARGIN_FRACTION * 11_000 - 0.01 * 11_000);
    // B's limiter raises it while the export is under its limit; A gives way by the margin a step
    expect(end.bW).toBeCloseTo(800, 0);
    for (const s of t.slice(2)) expect(s.exportW).toBeLessThanOrEqual(3000 + 0.01 * 11_000);
  });

  it('with B’s array able to give its share, A keeps to its rating’s share and B holds the rest', () => {
    const t = mixed(6000, 120);
    const share = Math.floor(((500 + 3000 - MARGIN_FRACTION * 11_000) * 6000) / 11_000);
    for (const s of t.slice(2)) {
      expect(s.exportW).toBeLessThanOrEqual(3000 + 0.01 * 11_000);
      expect(s.exportW).toBeGreaterThan(3000 - MARGIN_FRACTION * 11_000 - 0.01 * 11_000);
    }
    // A falls back to its share by the margin a step, never below it: the two loops do not chase each other
    for (let k = 2; k < t.length; k++) expect(t[k]!.aW).toBeLessThanOrEqual(t[k - 1]!.aW);
    expect(t.at(-1)!.aW).toBe(share);
  });
});
