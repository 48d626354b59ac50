/**
 * Cases for checking the optimiser: 200 seeded 48-hour cases over the corners of the problem
 * (negative prices, export above import, tight grid limits, no grid charge, full and empty starts,
 * unreachable end SoC), one case per day of a synthetic year of day-ahead prices on the simulator's
 * PV and house load, and a slot-by-slot feasibility check of a solution against the problem's rules.
 */
import type { OptimiserCase } from '../../src/optimiser/case.js';
import type { Solution } from '../../src/optimiser/solve.js';
import { dayAheadSeries } from '../../src/sim/day-ahead.js';
import { HouseLoad } from '../../src/sim/house-load.js';
import { hash01 } from '../../src/sim/noise.js';
import { clearSkyPlane } from '../../src/sim/solar.js';

export function randomCase(seed: number, slots = 192): OptimiserCase {
  let k = 0;
  const r = () => hash01(seed, 900, k++);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  const start = Date.UTC(2026, 0, 1) + seed * 86_400_000;
  const level = 0.05 + 0.35 * r();
  const swing = 0.05 + 0.25 * r();
  const negDepth = r() < 0.4 ? 0.05 + 0.5 * r() : 0;
  const exportKind = pick(['spread', 'spread', 'fixed', 'above']);
  const fee = 0.05 + 0.2 * r();
  const importPrice: number[] = [];
  const exportPrice: number[] = [];
  const pvW: number[] = [];
  const loadW: number[] = [];
  const pvPeak = pick([0, 3000, 8000, 15000]) * (0.5 + r());
  const base = 150 + 700 * r();
  for (let t = 0; t < slots; t++) {
    const h = (t % 96) / 4;
    const sun = Math.max(0, Math.sin(((h - 6) / 12) * Math.PI));
    let p = level + swing * Math.sin(((h - 12) / 24) * 2 * Math.PI) * (r() < 0.9 ? 1 : -1) + 0.04 * (r() - 0.5);
    if (negDepth > 0) p -= negDepth * sun ** 2;
    importPrice.push(round(p, 5));
    exportPrice.push(round(exportKind === 'fixed' ? 0.08 : exportKind === 'above' ? p + 0.02 * r() : p - fee, 5));
    pvW.push(Math.round(pvPeak * sun * (0.3 + 0.7 * r())));
    loadW.push(Math.round(base + (r() < 0.15 ? 3500 * r() : 0)));
  }
  const capacityWh = pick([2000, 5000, 10000, 20000]);
  const socMin = pick([0, 5, 10, 20]);
  const socMax = pick([80, 90, 95, 100]);
  const startKind = pick(['empty', 'full', 'mid']);
  const socInitial =
    startKind === 'empty' ? socMin : startKind === 'full' ? socMax : round(socMin + r() * (socMax - socMin), 2);
  const maxLoad = Math.max(...loadW);
  return {
    start: new Date(start).toISOString(),
    slotMinutes: 15,
    importPrice,
    exportPrice,
    pvW,
    loadW,
    battery: {
      capacityWh,
      socInitial,
      socMin,
      socMax,
      socFinalMin: pick([0, socMin, socInitial, 50, socMax]),
      maxChargeW: pick([1000, 3000, 5000, 10000]),
      maxDischargeW: pick([1000, 3000, 5000, 10000]),
      chargeEfficiency: pick([1, 0.95, 0.9]),
      dischargeEfficiency: pick([1, 0.95, 0.85]),
      cycleCostPerKWh: pick([0, 0, 0.02, 0.1]),
    },
    grid: {
      // tight: the main fuse below the peak load, so the battery must cover peaks (or it cannot)
      maxImportW: r() < 0.3 ? Math.round(maxLoad * (0.5 + 0.6 * r())) : 11000,
      maxExportW: r() < 0.3 ? Math.round(2000 * r()) : 7000,
      gridCharge: r() < 0.7,
    },
  };
}

const round = (x: number, digits: number) => Number(x.toFixed(digits));

/**
 * randomCase(seed) with the site's limits (docs/optimiser.md "Limits and curtailment") and more
 * negative export prices: export limits per slot (zero export, a fixed cap, scheduled blocks of 0 W
 * at any slot), import limits below the charge the battery could add, generation limits, and
 * negativeExportPrice `curtail` or `ignore`.
 */
export function limitedCase(seed: number, slots = 192): OptimiserCase {
  const c = randomCase(seed + 10_000, slots);
  let k = 0;
  const r = () => hash01(seed, 901, k++);
  // noon prices below zero on most of these cases: the export a plan would rather curtail
  const negDepth = r() < 0.7 ? 0.05 + 0.4 * r() : 0;
  c.exportPrice = c.exportPrice.map((p, t) => {
    const sun = Math.max(0, Math.sin((((t % 96) / 4 - 6) / 12) * Math.PI));
    return round(p - negDepth * sun ** 2, 5);
  });
  const perSlot = (kind: number, level: () => number): (number | null)[] | undefined => {
    if (kind < 0.25) return undefined;
    if (kind < 0.5) return new Array(slots).fill(level());
    // scheduled blocks: a few runs of slots limited, the rest free
    const out: (number | null)[] = new Array(slots).fill(null);
    for (let b = Math.floor(1 + 4 * r()); b > 0; b--) {
      const from = Math.floor(r() * slots);
      const w = level();
      for (let t = from; t < Math.min(slots, from + 1 + Math.floor(24 * r())); t++) out[t] = w;
    }
    return out;
  };
  const exportW = perSlot(r(), () => (r() < 0.5 ? 0 : Math.round(3000 * r())));
  const importW = perSlot(r(), () => Math.round(500 + 4000 * r()));
  const generationW = perSlot(r() < 0.5 ? 0 : r(), () => Math.round(6000 * r()));
  c.limits = {
    ...(exportW ? { exportW } : {}),
    ...(importW ? { importW } : {}),
    ...(generationW ? { generationW } : {}),
    negativeExportPrice: r() < 0.7 ? 'curtail' : 'ignore',
  };
  return c;
}

/** the case's bounds of slot t as the problem states them (lp-file.ts writes the same) */
function slotBounds(c: OptimiserCase, t: number) {
  const l = c.limits;
  const at = (v: (number | null)[] | undefined) => v?.[t] ?? Number.POSITIVE_INFINITY;
  const pv = Math.min(c.pvW[t]!, at(l?.generationW));
  return {
    pv,
    importW: Math.min(c.grid.maxImportW, Math.max(at(l?.importW), c.loadW[t]! - pv)),
    exportW: Math.min(c.grid.maxExportW, at(l?.exportW)),
    curtailPrice: l?.negativeExportPrice === 'ignore' ? Math.max(0, -c.exportPrice[t]!) + 1e-4 : 0,
  };
}

/**
 * Where the plan curtails PV that no generation limit takes, it must pay: the export is at its
 * limit, or the export price is below zero (and negativeExportPrice is not `ignore`). Never more
 * than the limit needs: the first such slot as text, or undefined.
 */
export function needlessCurtailment(c: OptimiserCase, sol: Solution): string | undefined {
  const tol = 1e-6 * (1 + c.grid.maxExportW + Math.max(...c.pvW));
  for (let t = 0; t < sol.slots.length; t++) {
    const s = sol.slots[t]!;
    const bounds = slotBounds(c, t);
    const curtailed = bounds.pv - s.pvUsedW;
    if (curtailed <= tol) continue;
    if (s.exportW >= bounds.exportW - tol) continue;
    if (c.exportPrice[t]! < 0 && c.limits?.negativeExportPrice !== 'ignore') continue;
    return `slot ${t}: curtails ${curtailed} W at export price ${c.exportPrice[t]} exporting ${s.exportW} of ${bounds.exportW} W`;
  }
  return undefined;
}

/** The simulator's demo site: location, roof and house (src/sim/config.ts defaults). */
const DEMO = { latDeg: 52.52, lonDeg: 13.4, tiltDeg: 30, azimuthFromSouthDeg: 0, peakW: 6000, derate: 0.9 };

/** PV (clear-sky, the demo roof) and house load per slot, slot means sampled each minute. */
export function siteForecast(start: number, slots: number, seed = 1): { pvW: number[]; loadW: number[] } {
  const plane = clearSkyPlane(DEMO);
  const house = new HouseLoad(
    { baseW: 300, morningPeakW: 700, eveningPeakW: 1100, applianceRate: 1 },
    seed,
    'Europe/Berlin',
  );
  const pvW: number[] = [];
  const loadW: number[] = [];
  for (let t = 0; t < slots; t++) {
    let pv = 0;
    let load = 0;
    for (let m = 0; m < 15; m++) {
      const ts = start + t * 900_000 + m * 60_000 + 30_000;
      pv += (plane(ts) / 1000) * DEMO.peakW * DEMO.derate;
      load += house.demandW(ts);
    }
    pvW.push(Math.round(pv / 15));
    loadW.push(Math.round(load / 15));
  }
  return { pvW, loadW };
}

/** Import: the day-ahead price plus fees and levies (0.20 /kWh, an assumption); export: the day-ahead price. */
export function dailyCase(day: number, year = 2024, days = 1): OptimiserCase {
  const start = Date.UTC(year, 0, 1) - 3_600_000 + day * 86_400_000; // local midnight, CET
  const spot = dayAheadSeries(start, 96 * days).map((p) => p / 1000);
  return {
    start: new Date(start).toISOString(),
    slotMinutes: 15,
    importPrice: spot.map((p) => round(p + 0.2, 5)),
    exportPrice: spot.map((p) => round(p, 5)),
    ...siteForecast(start, 96 * days),
    battery: {
      capacityWh: 10000,
      socInitial: 30,
      socMin: 10,
      socMax: 95,
      socFinalMin: 30,
      maxChargeW: 5000,
      maxDischargeW: 5000,
      chargeEfficiency: 0.95,
      dischargeEfficiency: 0.95,
      cycleCostPerKWh: 0.02,
    },
    grid: { maxImportW: 11000, maxExportW: 7000, gridCharge: true },
  };
}

/**
 * dailyCase with a connection's limits, as the daemon hands them on: a 3 kW export cap in every
 * slot, 0 W scheduled from 11:00 to 15:00 UTC each day, a 4 kW import limit
 */
export function limitedDailyCase(day: number, year = 2024, days = 1): OptimiserCase {
  const c = dailyCase(day, year, days);
  const n = c.importPrice.length;
  const hourOf = (t: number) => new Date(Date.parse(c.start) + t * 900_000).getUTCHours();
  c.limits = {
    exportW: Array.from({ length: n }, (_, t) => (hourOf(t) >= 11 && hourOf(t) < 15 ? 0 : 3000)),
    importW: new Array(n).fill(4000),
  };
  return c;
}

/** Every rule of the problem, slot by slot; the first broken one as text, or undefined. */
export function violation(c: OptimiserCase, sol: Solution): string | undefined {
  const h = c.slotMinutes / 60;
  const b = c.battery;
  const cap = b.capacityWh / 100;
  const tol = 1e-6 * (1 + c.grid.maxImportW + c.grid.maxExportW + b.maxChargeW + b.maxDischargeW);
  const eTol = 1e-6 * (1 + b.capacityWh);
  let e = b.socInitial * cap;
  let total = 0;
  for (let t = 0; t < sol.slots.length; t++) {
    const s = sol.slots[t]!;
    const within = (v: number, hi: number, name: string) =>
      v < -tol || v > hi + tol ? `slot ${t}: ${name} ${v} outside 0..${hi}` : undefined;
    const bounds = slotBounds(c, t);
    const bad =
      within(s.chargeW, b.maxChargeW, 'charge') ??
      within(s.dischargeW, b.maxDischargeW, 'discharge') ??
      within(s.pvUsedW, bounds.pv, 'PV used') ??
      within(s.importW, bounds.importW, 'import') ??
      within(s.exportW, bounds.exportW, 'export');
    if (bad) return bad;
    if (Math.abs(s.curtailedW - (c.pvW[t]! - s.pvUsedW)) > tol)
      return `slot ${t}: curtailed ${s.curtailedW} W, the flows give ${c.pvW[t]! - s.pvUsedW}`;
    const balance = s.pvUsedW + s.importW + s.dischargeW - c.loadW[t]! - s.exportW - s.chargeW;
    if (Math.abs(balance) > tol) return `slot ${t}: power balance off by ${balance} W`;
    if (!c.grid.gridCharge && s.chargeW > s.pvUsedW + tol) return `slot ${t}: charges ${s.chargeW} W from the grid`;
    e += (b.chargeEfficiency * s.chargeW - s.dischargeW / b.dischargeEfficiency) * h;
    if (Math.abs(e - s.energyEndWh) > eTol) return `slot ${t}: energy ${s.energyEndWh} Wh, the flows give ${e}`;
    if (e < b.socMin * cap - eTol || e > b.socMax * cap + eTol) return `slot ${t}: energy ${e} Wh outside SoC limits`;
    const cost =
      ((c.importPrice[t]! * s.importW -
        c.exportPrice[t]! * s.exportW +
        b.cycleCostPerKWh * s.dischargeW +
        bounds.curtailPrice * (c.pvW[t]! - s.pvUsedW)) *
        h) /
      1000;
    if (Math.abs(cost - s.cost) > 1e-9 * (1 + Math.abs(cost)))
      return `slot ${t}: cost ${s.cost}, the flows give ${cost}`;
    total += cost;
  }
  if (e < Math.max(b.socMin, b.socFinalMin) * cap - eTol) return `ends at ${e} Wh, below socFinalMin`;
  if (Math.abs(total - sol.cost) > 1e-9 * (1 + Math.abs(total))) return `cost ${sol.cost}, the slots add to ${total}`;
  return undefined;
}
