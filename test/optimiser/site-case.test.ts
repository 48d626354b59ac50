/**
 * The case the daemon's loop builds (src/optimiser/site-case.ts): the horizon follows the tariff's
 * prices, the envelope becomes the battery's limits, a battery outside the envelope still gives a
 * valid case, and an envelope that leaves the load uncovered is an infeasible case, not a crash.
 */
import { describe, expect, it } from 'vitest';
import { scheduleAt, scheduleOver } from '../../src/limits/schedule.js';
import { SiteLimits } from '../../src/limits/sources.js';
import { parseCase } from '../../src/optimiser/case.js';
import type { History } from '../../src/optimiser/forecast.js';
import { optimise } from '../../src/optimiser/plan.js';
import { HORIZON_SLOTS, type SiteCaseInput, SLOT_MS, siteCase } from '../../src/optimiser/site-case.js';
import { InfeasibleCaseError } from '../../src/optimiser/solve.js';
import type { StoredLimitSlot } from '../../src/store/limits.js';
import { testEnvelope } from '../support/control-envelope.js';

const NOW = Date.parse('2026-01-15T00:07:00Z');
const DAY = 86_400_000;
const envelope = { ...testEnvelope, maxDischargeW: 4000, importLimitW: 11000, exportLimitW: 7000 };
/** a week of history: 400 W of load at every quarter hour, no PV */
const flat = (w: number): History => ({ start: NOW - 7 * DAY, values: new Array(7 * 96).fill(w) });

function input(over: Partial<SiteCaseInput> = {}): SiteCaseInput {
  return {
    now: NOW,
    envelope,
    capacityWh: 10_000,
    socPct: 60,
    prices: () => ({ importPrice: 0.3, exportPrice: 0.08 }),
    pvSite: { latDeg: 52.52, lonDeg: 13.4, tiltDeg: 30, azimuthFromSouthDeg: 0, timezone: 'Europe/Berlin' },
    pvHistory: flat(0),
    loadHistory: flat(400),
    ...over,
  };
}

const built = (i: SiteCaseInput) => {
  const r = siteCase(i);
  if (!('case' in r)) throw new Error(r.none);
  return parseCase(r.case);
};

describe('siteCase', () => {
  it('starts at the current quarter hour, 48 h long, with the envelope as the battery’s limits', () => {
    const c = built(input());
    expect(c.start).toBe('2026-01-15T00:00:00.000Z');
    expect(c.importPrice).toHaveLength(HORIZON_SLOTS);
    expect(c.loadW.every((w) => w === 400)).toBe(true);
    expect(c.pvW.every((w) => w === 0)).toBe(true);
    // reserveSoc is above socMin: no discharge goes below it
    expect(c.battery).toMatchObject({ socInitial: 60, socMin: 20, socMax: 95, socFinalMin: 50 });
    expect(c.battery).toMatchObject({ maxChargeW: 3000, maxDischargeW: 4000 });
    expect(c.grid).toEqual({ maxImportW: 11000, maxExportW: 7000, gridCharge: true });
  });

  it('on days the PV does not cover, the load is the median of the same time on days of the type, not the mean', () => {
    // a week of 400 W but for one working day (local 8 January, a Thursday) at 2400 W: the working
    // days' mean is 800 W there, their median 400 W
    const start = NOW - 7 * DAY;
    const values = Array.from({ length: 7 * 96 }, (_, k) =>
      new Date(start + k * SLOT_MS + 3_600_000).getUTCDate() === 8 ? 2400 : 400,
    );
    const c = built(input({ loadHistory: { start, values } }));
    expect(c.loadW.every((w) => w === 400)).toBe(true);
  });

  it('takes the losses and the wear from site.yaml control: (defaults 0.95 each way, 0)', () => {
    expect(built(input()).battery).toMatchObject({
      chargeEfficiency: 0.95,
      dischargeEfficiency: 0.95,
      cycleCostPerKWh: 0,
    });
    const own = { ...envelope, chargeEfficiency: 0.97, dischargeEfficiency: 0.92, cycleCostPerKWh: 0.04 };
    expect(built(input({ envelope: own })).battery).toMatchObject({
      chargeEfficiency: 0.97,
      dischargeEfficiency: 0.92,
      cycleCostPerKWh: 0.04,
    });
  });

  it('ends where the tariff’s prices end; a missing export price pays nothing; no price now is no case', () => {
    const until = NOW + 10 * SLOT_MS;
    const c = built(input({ prices: (b) => (b < until ? { importPrice: 0.2 } : {}) }));
    expect(c.importPrice).toHaveLength(11);
    expect(c.exportPrice.every((p) => p === 0)).toBe(true);
    expect(siteCase(input({ prices: () => ({}) }))).toEqual({ none: expect.stringMatching(/no import price/) });
    expect(siteCase(input({ capacityWh: 0 }))).toEqual({ none: expect.stringMatching(/capacity/) });
  });

  it('a battery below the envelope’s floor or above its ceiling still makes a valid case', () => {
    expect(built(input({ socPct: 5 })).battery).toMatchObject({ socInitial: 5, socMin: 5, socFinalMin: 5 });
    expect(built(input({ socPct: 99 })).battery).toMatchObject({ socInitial: 99, socMax: 99, socFinalMin: 50 });
  });

  it('an envelope that leaves the load uncovered is an InfeasibleCaseError naming the slot', () => {
    const c = built(input({ envelope: { ...envelope, importLimitW: 0, maxDischargeW: 0 } }));
    expect(() => optimise(c)).toThrow(InfeasibleCaseError);
    expect(() => optimise(c)).toThrow(/slot 0: load 400 W/);
  });
});

describe('siteCase: the site limits per slot', () => {
  it('site.yaml in every slot, a schedule slot at any second in every quarter hour it touches, none after', () => {
    const limits = new SiteLimits();
    limits.add({ name: 'site.yaml', at: () => ({ exportW: 5000 }), over: () => ({ exportW: 5000 }) });
    // 0 W from 00:20:30 for 40 s, and an import limit from 01:00 to 02:00
    const slots: StoredLimitSlot[] = [
      {
        startMs: NOW + 13.5 * 60_000,
        endMs: NOW + 14.5 * 60_000 - 20_000,
        exportW: 0,
        importW: null,
        generationW: null,
      },
      { startMs: NOW + 53 * 60_000, endMs: NOW + 113 * 60_000, exportW: null, importW: 2000, generationW: null },
    ];
    limits.add({ name: 'schedule', at: (t) => scheduleAt(slots, t), over: (a, b) => scheduleOver(slots, a, b) });
    // the grid operator and the price plan nothing ahead: the price is the plan's own cost
    limits.add({ name: 'price', at: () => ({ exportW: 0 }) });
    const c = built(input({ limits: (a, b) => limits.over(a, b) }));
    const exportW = c.limits?.exportW ?? [];
    expect(exportW).toHaveLength(HORIZON_SLOTS);
    expect(exportW.slice(0, 3)).toEqual([5000, 0, 5000]);
    expect(exportW.every((w, k) => k === 1 || w === 5000)).toBe(true);
    expect(c.limits?.importW?.slice(0, 9)).toEqual([null, null, null, null, 2000, 2000, 2000, 2000, null]);
    expect(c.limits?.generationW).toBeUndefined();
    expect(c.limits?.negativeExportPrice).toBeUndefined();
  });

  it('no limits: the case has none; negativeExportPrice ignore is handed on', () => {
    expect(built(input({ limits: () => ({}) })).limits).toBeUndefined();
    expect(built(input({ negativeExportPrice: 'ignore' })).limits).toEqual({ negativeExportPrice: 'ignore' });
  });
});
