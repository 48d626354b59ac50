/**
 * A simulated year of the demo site (src/sim: PV with clouds, house load, the demo battery) on the
 * synthetic day-ahead prices (src/sim/day-ahead.ts), run three ways: plain self-consumption; the
 * optimiser re-planning every 4 hours from forecasts learned on the simulated history (with their
 * errors); the same with perfect foresight (the forecast is what then happens); and, to show where
 * the gap between the two comes from, with the PV forecast but the load as it will be. Plans are
 * executed slot by slot on what really happens, as the executor would: a charge or discharge at the
 * planned power up to the planned SoC (targetSoc), self-consumption on the real surplus, hold.
 */

import { SLOT_MODES } from '../../src/control/plan-body.js';
import type { OptimiserCase } from '../../src/optimiser/case.js';
import {
  forecastError,
  forecastLoad,
  forecastPv,
  type History,
  loadSamples,
  planLoad,
  surplusLoad,
} from '../../src/optimiser/forecast.js';
import { optimise, type PlanSlot } from '../../src/optimiser/plan.js';
import { policyStep, scenariosAt, solvePolicy } from '../../src/optimiser/policy.js';
import { chooseMode } from '../../src/optimiser/policy-plan.js';
import { defaultSimConfig } from '../../src/sim/config.js';
import { dayAheadSeries } from '../../src/sim/day-ahead.js';
import { HouseLoad } from '../../src/sim/house-load.js';
import { PvArray } from '../../src/sim/pv-array.js';

const SLOT = 900_000;
const FEE = 0.2; // import: the day-ahead price plus fees and levies (an assumption; see bench/README.md)
const HORIZON = 192;

const sim = defaultSimConfig();
const blocks = sim.battery.blocks;
const battery = {
  capacityWh: blocks.reduce((s, b) => s + b.capacityWh, 0),
  socMin: blocks[0]!.socMinPct,
  socMax: blocks[0]!.socMaxPct,
  maxChargeW: blocks.reduce((s, b) => s + b.maxChargeW, 0),
  maxDischargeW: blocks.reduce((s, b) => s + b.maxDischargeW, 0),
  chargeEfficiency: blocks[0]!.chargeEfficiency,
  dischargeEfficiency: blocks[0]!.dischargeEfficiency,
  cycleCostPerKWh: 0.02,
};
const grid = { maxImportW: 11000, maxExportW: 7000, gridCharge: true };

export interface YearResult {
  selfConsumption: number;
  optimiser: number;
  perfect: number;
  /** the optimiser on its PV forecast but the load as it will be: where the gap to perfect comes from */
  knownLoad: number;
  solves: number;
  pvMaeRelative: number;
  loadMaeRelative: number;
  /** the optimiser with the PV as it will be but its load forecast (diagnosis: NaN unless asked) */
  knownPv: number;
  /** each run's cost per calendar month of the simulated days (UTC), for the gap's breakdown */
  monthly: Record<'selfConsumption' | 'optimiser' | 'perfect' | 'knownLoad' | 'knownPv', number[]>;
  /** forecastError at the year's end: what the daemon would show for the last week */
  lastWeek: { pv: number; load: number };
}

/** slot means of the simulator's PV (available power) and house load, sampled each minute */
function actuals(seed: number, start: number, slots: number): { pv: Float64Array; load: Float64Array } {
  const pvArray = new PvArray(sim.pv, sim.location, sim.weather, seed);
  const house = new HouseLoad(sim.house, seed, sim.location.timezone);
  const out = new Float64Array(pvArray.count);
  const pv = new Float64Array(slots);
  const load = new Float64Array(slots);
  for (let k = 0; k < slots; k++) {
    let p = 0;
    let l = 0;
    for (let m = 0; m < 15; m++) {
      const ts = start + k * SLOT + m * 60_000 + 30_000;
      p += pvArray.availableW(ts, out);
      l += house.demandW(ts);
    }
    pv[k] = p / 15;
    load[k] = l / 15;
  }
  return { pv, load };
}

export type LoadForecast = (timezone: string, history: History, from: number, slots: number) => number[];

export interface YearOptions {
  year?: number;
  days?: number;
  /** the simulator's seed: its clouds and the house's appliances */
  seed?: number;
  /** slots between plans: 1 is the daemon's every quarter hour */
  replanSlots?: number;
  loadForecast?: LoadForecast;
  /** experiments (bench/README.md "Optimiser"): how a plan's slot is executed */
  variant?: Variant;
  /** the optimiser on its forecasts only (no perfect-foresight or known-load runs) */
  only?: boolean;
  /** also run the optimiser with the PV known and the load forecast (the gap's breakdown) */
  knownPv?: boolean;
  /** the first simulated day (0 = 1 January), for a sub-range */
  startDay?: number;
  /** socFinalMin from the SoC now (percent): the daemon's is min(SoC, 50) (site-case.ts) */
  finalSoc?: (soc: number) => number;
  /** each executed slot of each run (diagnosis) */
  trace?: (
    run: string,
    k: number,
    s: PlanSlot,
    w: number,
    e: number,
    cost: number,
    c: OptimiserCase,
    j: number,
  ) => void;
}

/**
 * How a plan's slots are executed, and the case's load (bench/README.md "Optimiser"): the defaults
 * are what the daemon does; the others are the experiments recorded there.
 */
export interface Variant {
  /** a charge or discharge ends at the plan's socEnd (the daemon sends no targetSoc: false) */
  target?: boolean;
  /** a charge slot stores the real PV surplus beyond the planned power (the executor, for the optimiser's plans: true) */
  chargeTopUp?: boolean;
  /** the case's load in forecast-surplus slots: PV less the expected surplus (site-case.ts: true) */
  surplusLoad?: boolean;
  /** the case's load on days with less forecast PV than load: the median (planLoad, site-case.ts: true) */
  gridDayMedian?: boolean;
  /** a hold slot with forecast surplus: 'sc' runs self-consumption, 'absorb' charges the real surplus only */
  holdSurplus?: 'sc' | 'absorb';
  /** a device without hold (Huawei, Victron): every hold slot of a point plan runs self-consumption, the policy plans without hold */
  noHold?: boolean;
  /**
   * 'policy' (the daemon): the policy on the load's samples (policy.ts), each slot's mode chosen
   * at the real SoC (policy-plan.ts chooseMode), as the daemon's quarter-hourly plan does;
   * 'ideal': the policy's own power for the slot's real load and PV, which no executor mode
   * gives (the ceiling of planning on the spread); 'point': the optimum of the case's one load
   * forecast (planLoad), what the daemon did before
   */
  plan?: 'policy' | 'ideal' | 'point';
  /** loadSamples' weeks and neighbouring slots (experiments) */
  sampleWeeks?: number;
  sampleNeighbours?: number;
}

export function simulateYear(o: YearOptions = {}): YearResult {
  const {
    year = 2024,
    days = 366,
    seed = sim.seed,
    replanSlots: REPLAN_SLOTS = 1,
    loadForecast = forecastLoad,
    variant: v = {},
  } = o;
  const { chargeTopUp = true, surplusLoad: useSurplusLoad = true, gridDayMedian = true, plan: planKind = 'policy' } = v;
  // the daemon's load (site-case.ts) unless an experiment asks for another forecast
  const daemonLoad = !o.loadForecast && useSurplusLoad && gridDayMedian;
  const warm = 28 * 96; // four weeks of history before the year for the forecasts
  const yearStart = Date.UTC(year, 0, 1 + (o.startDay ?? 0)) - 3_600_000;
  const start = yearStart - warm * SLOT;
  const n = warm + days * 96 + HORIZON;
  const { pv, load } = actuals(seed, start, n);
  const spot = dayAheadSeries(start, n).map((p) => p / 1000);
  const pvHistory: History = { start, values: Array.from(pv) };
  const loadHistory: History = { start, values: Array.from(load) };
  const site = { ...sim.location, tiltDeg: sim.pv.tiltDeg, azimuthFromSouthDeg: sim.pv.azimuthFromSouthDeg };
  const h = 0.25;
  const emin = (battery.socMin / 100) * battery.capacityWh;
  const emax = (battery.socMax / 100) * battery.capacityWh;

  const slotCost = (k: number, batteryW: number): number => {
    // batteryW > 0 charges; the rest of the house's balance goes through the meter
    const net = load[k]! - pv[k]! + batteryW;
    const imp = Math.max(0, net);
    const exp = Math.min(grid.maxExportW, Math.max(0, -net));
    const discharge = Math.max(0, -batteryW);
    return ((spot[k]! + FEE) * imp - spot[k]! * exp + battery.cycleCostPerKWh * discharge) * (h / 1000);
  };
  const step = (e: number, w: number) =>
    e + (w > 0 ? battery.chargeEfficiency * w : w / battery.dischargeEfficiency) * h;
  const selfConsumptionW = (k: number, e: number) => {
    const surplus = pv[k]! - load[k]!;
    if (surplus > 0) return Math.min(surplus, battery.maxChargeW, (emax - e) / (battery.chargeEfficiency * h));
    return -Math.min(-surplus, battery.maxDischargeW, ((e - emin) * battery.dischargeEfficiency) / h);
  };
  /** what the executor does in slot k at stored energy e with the plan's slot */
  const execute = (k: number, e: number, s: PlanSlot, c: OptimiserCase, j: number, topUp: boolean): number => {
    const target = (s.socEnd / 100) * battery.capacityWh;
    if (s.mode === 'self-consumption') return selfConsumptionW(k, e);
    if (s.mode === 'charge') {
      const upTo = v.target ? Math.min(emax, target) : emax;
      const w = Math.max(0, Math.min(s.powerW, (upTo - e) / (battery.chargeEfficiency * h)));
      return topUp ? Math.max(w, selfConsumptionW(k, e)) : w;
    }
    if (s.mode === 'discharge') {
      const downTo = v.target ? Math.max(emin, target) : emin;
      return -Math.max(0, Math.min(s.powerW, ((e - downTo) * battery.dischargeEfficiency) / h));
    }
    if (v.noHold) return selfConsumptionW(k, e);
    if (v.holdSurplus && c.pvW[j]! > c.loadW[j]!) {
      const sc = selfConsumptionW(k, e);
      return v.holdSurplus === 'sc' ? sc : Math.max(0, sc);
    }
    return 0;
  };

  const exact = (e: number, s: PlanSlot): number => {
    const d = (s.socEnd / 100) * battery.capacityWh - e;
    // socEnd is rounded to 0.01 % (1 Wh here): a hold must not cycle that much every slot
    if (Math.abs(d) < 1) return 0;
    return d > 0 ? d / (battery.chargeEfficiency * h) : (d * battery.dischargeEfficiency) / h;
  };

  const monthOf = (k: number) => new Date(start + k * SLOT + 3_600_000).getUTCMonth();
  const run = (perfectPv: boolean, perfectLoad: boolean, every = REPLAN_SLOTS) => {
    let e = (50 / 100) * battery.capacityWh;
    let cost = 0;
    const monthly = new Array<number>(12).fill(0);
    let solves = 0;
    for (let k0 = warm; k0 < warm + days * 96; k0 += every) {
      const from = start + k0 * SLOT;
      const pvW = perfectPv
        ? Array.from(pv.subarray(k0, k0 + HORIZON), Math.round)
        : forecastPv(site, pvHistory, from, HORIZON);
      let loadW = perfectLoad
        ? Array.from(load.subarray(k0, k0 + HORIZON), Math.round)
        : daemonLoad
          ? planLoad(site.timezone, loadHistory, from, pvW)
          : loadForecast(site.timezone, loadHistory, from, HORIZON);
      if (useSurplusLoad && !perfectLoad && !daemonLoad)
        loadW = surplusLoad(site.timezone, loadHistory, from, pvW, loadW);
      const c: OptimiserCase = {
        start: new Date(from).toISOString(),
        slotMinutes: 15,
        importPrice: spot.slice(k0, k0 + HORIZON).map((p) => p + FEE),
        exportPrice: spot.slice(k0, k0 + HORIZON),
        pvW,
        loadW,
        battery: {
          ...battery,
          socInitial: (100 * e) / battery.capacityWh,
          // as the daemon asks (site-case.ts): end no lower than now, at most 50 %
          socFinalMin: Math.max(
            battery.socMin,
            o.finalSoc ? o.finalSoc((100 * e) / battery.capacityWh) : Math.min((100 * e) / battery.capacityWh, 50),
          ),
        },
        grid,
      };
      if (planKind !== 'point' && !perfectPv && !perfectLoad) {
        const spread = {
          loadW: loadSamples(site.timezone, loadHistory, from, HORIZON, v.sampleWeeks, v.sampleNeighbours),
        };
        const pol = solvePolicy(c, spread);
        solves++;
        for (let j = 0; j < every; j++) {
          let w: number;
          if (planKind === 'ideal') {
            const st = policyStep(pol, j, e, load[k0 + j]!, pv[k0 + j]!);
            w = st ? st.flows[0]! - st.flows[1]! : 0;
          } else {
            const modes = v.noHold ? SLOT_MODES.filter((x) => x !== 'hold') : SLOT_MODES;
            const m = chooseMode(c, pol, j, e, scenariosAt(c, spread, j), modes);
            w = execute(k0 + j, e, { interval: '', mode: m.mode, powerW: m.powerW, socEnd: 0 }, c, j, chargeTopUp);
          }
          const sc = slotCost(k0 + j, w);
          cost += sc;
          monthly[monthOf(k0 + j)]! += sc;
          e = Math.min(emax, Math.max(emin, step(e, w)));
        }
        continue;
      }
      const plan = optimise(c);
      solves++;
      for (let j = 0; j < every; j++) {
        // perfect foresight is the optimum: its plan's energy path exactly, whatever the slot's mode
        const w =
          perfectPv && perfectLoad ? exact(e, plan.slots[j]!) : execute(k0 + j, e, plan.slots[j]!, c, j, chargeTopUp);
        const sc = slotCost(k0 + j, w);
        o.trace?.(`${perfectPv ? 'pv' : ''}${perfectLoad ? 'load' : ''}`, k0 + j, plan.slots[j]!, w, e, sc, c, j);
        cost += sc;
        monthly[monthOf(k0 + j)]! += sc;
        e = Math.min(emax, Math.max(emin, step(e, w)));
      }
    }
    return { cost, solves, monthly };
  };

  let e = (50 / 100) * battery.capacityWh;
  let sc = 0;
  const scMonthly = new Array<number>(12).fill(0);
  for (let k = warm; k < warm + days * 96; k++) {
    const w = selfConsumptionW(k, e);
    const c = slotCost(k, w);
    sc += c;
    scMonthly[monthOf(k)]! += c;
    e = step(e, w);
  }
  const opt = run(false, false);
  const skipped = { cost: Number.NaN, solves: 0, monthly: new Array<number>(12).fill(Number.NaN) };
  // with perfect foresight a new plan says what the last one did: every 4 hours is enough
  const pf = o.only ? skipped : run(true, true, 16);
  const knownLoad = o.only ? skipped : run(false, true);
  const knownPv = o.knownPv ? run(true, false) : skipped;
  // the forecasts' error over the year, day-ahead from each midnight
  let pvErr = 0;
  let pvSum = 0;
  let loadErr = 0;
  let loadSum = 0;
  for (let d = 0; d < days; d++) {
    const k0 = warm + d * 96;
    const from = start + k0 * SLOT;
    const fp = forecastPv(site, pvHistory, from, 96);
    const fl = loadForecast(site.timezone, loadHistory, from, 96);
    for (let j = 0; j < 96; j++) {
      pvErr += Math.abs(fp[j]! - pv[k0 + j]!);
      pvSum += pv[k0 + j]!;
      loadErr += Math.abs(fl[j]! - load[k0 + j]!);
      loadSum += load[k0 + j]!;
    }
  }
  const end = start + (warm + days * 96) * SLOT;
  const lastWeek = {
    pv: forecastError(pvHistory, end, (f, n) => forecastPv(site, pvHistory, f, n)).relative,
    load: forecastError(loadHistory, end, (f, n) => loadForecast(site.timezone, loadHistory, f, n)).relative,
  };
  return {
    lastWeek,
    selfConsumption: sc,
    optimiser: opt.cost,
    perfect: pf.cost,
    knownLoad: knownLoad.cost,
    knownPv: knownPv.cost,
    monthly: {
      selfConsumption: scMonthly,
      optimiser: opt.monthly,
      perfect: pf.monthly,
      knownLoad: knownLoad.monthly,
      knownPv: knownPv.monthly,
    },
    solves: opt.solves + pf.solves + knownLoad.solves + knownPv.solves,
    pvMaeRelative: pvErr / pvSum,
    loadMaeRelative: loadErr / loadSum,
  };
}
