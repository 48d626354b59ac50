/**
 * Forecasts on the box, no internet (docs/optimiser.md "The forecasts"): pure functions of the
 * site's own 15-minute history.
 *
 * PV: the clear-sky irradiance on the roof's plane (the simulator's solar model, src/sim/solar.ts:
 * NOAA solar position, Meinel clear-sky beam) times a learned ratio per slot of the day: over the
 * last days, the energy produced in that slot over the clear-sky irradiance in it. The ratio holds
 * the array's size, derating, shading at that hour and the recent weather in one number.
 * Load: the mean of the same time of day over the last weeks on days of the same type (Monday to
 * Friday, or Saturday and Sunday: a household's day follows the working week, and pooling a
 * type's days averages 8 to 20 days where one weekday has 4); where those are missing, the same
 * time on any recent day.
 * Error: each forecast made for each of the last 7 days from the history before that day, against
 * what was measured: mean absolute error, W, and relative to the mean measured.
 */
import { IANAZone } from 'luxon';
import { clearSkyPlane, type PanelGeometry } from '../sim/solar.js';

const SLOT_MS = 900_000;
const DAY_MS = 86_400_000;
const SLOTS_PER_DAY = 96;

/** Equal 15-minute slots from `start` (ms); NaN where nothing was measured. */
export interface History {
  start: number;
  values: readonly number[];
}

const valueAt = (h: History, ts: number): number => {
  const k = Math.round((ts - h.start) / SLOT_MS);
  return k >= 0 && k < h.values.length ? (h.values[k] ?? Number.NaN) : Number.NaN;
};

/** slot of the local day (0..95) and local weekday (0 = Sunday) of the slot starting at ts */
function localSlot(zone: IANAZone, ts: number): { slot: number; weekday: number } {
  const local = ts + zone.offset(ts) * 60_000;
  const day = Math.floor(local / DAY_MS);
  return { slot: Math.floor((local - day * DAY_MS) / SLOT_MS), weekday: (((day + 4) % 7) + 7) % 7 };
}

/** mean clear-sky irradiance on the plane over the slot (W/m²), sampled every 5 minutes */
function clearSkySlot(plane: (ts: number) => number, ts: number): number {
  let sum = 0;
  for (let m = 0; m < 3; m++) sum += plane(ts + (m * 5 + 2.5) * 60_000);
  return sum / 3;
}

export interface PvSite extends PanelGeometry {
  timezone: string;
}

/** PV forecast (W) for `slots` slots from `from`, learned from the `days` days of history before it. */
export function forecastPv(site: PvSite, history: History, from: number, slots: number, days = 7): number[] {
  const plane = clearSkyPlane(site);
  const zone = IANAZone.create(site.timezone);
  const produced = new Float64Array(SLOTS_PER_DAY);
  const clear = new Float64Array(SLOTS_PER_DAY);
  for (let ts = from - days * DAY_MS; ts < from; ts += SLOT_MS) {
    const w = valueAt(history, ts);
    const g = clearSkySlot(plane, ts);
    if (Number.isNaN(w) || g < 20) continue; // dawn and dusk say little about the array
    const { slot } = localSlot(zone, ts);
    produced[slot]! += w;
    clear[slot]! += g;
  }
  // a slot with no daylight history (the first days, a long outage) borrows the day's overall ratio
  const dayRatio = sum(produced) / Math.max(1, sum(clear));
  return Array.from({ length: slots }, (_, k) => {
    const ts = from + k * SLOT_MS;
    const { slot } = localSlot(zone, ts);
    const ratio = clear[slot]! > 0 ? produced[slot]! / clear[slot]! : dayRatio;
    return Math.max(0, Math.round(ratio * clearSkySlot(plane, ts)));
  });
}

/** 0 Monday to Friday, 1 Saturday and Sunday */
const dayType = (weekday: number) => (weekday === 0 || weekday === 6 ? 1 : 0);

/**
 * Load forecast (W) for `slots` slots from `from`: the same time on days of the same type over the
 * last `weeks`, their mean (or their median), or where those are missing the mean of the same
 * time on any day of the last week.
 */
export function forecastLoad(
  timezone: string,
  history: History,
  from: number,
  slots: number,
  weeks = 4,
  statistic: 'mean' | 'median' = 'mean',
): number[] {
  const zone = IANAZone.create(timezone);
  const same = dayTypeLoads(zone, history, from, weeks);
  const any = new Float64Array(SLOTS_PER_DAY);
  const anyN = new Float64Array(SLOTS_PER_DAY);
  for (let ts = from - 7 * DAY_MS; ts < from; ts += SLOT_MS) {
    const w = valueAt(history, ts);
    if (Number.isNaN(w)) continue;
    const { slot } = localSlot(zone, ts);
    any[slot]! += w;
    anyN[slot]! += 1;
  }
  return Array.from({ length: slots }, (_, k) => {
    const { slot, weekday } = localSlot(zone, from + k * SLOT_MS);
    const loads = same[dayType(weekday) * SLOTS_PER_DAY + slot]!;
    if (loads.length > 0) return Math.round(statistic === 'mean' ? mean(loads) : median(loads));
    return anyN[slot]! > 0 ? Math.round(any[slot]! / anyN[slot]!) : 0;
  });
}

/**
 * How far loadSamples looks: 6 weeks of the day type's days, and the quarter hour either side of
 * the slot (an appliance's start is as likely a quarter hour earlier or later): 60 to 90 samples a
 * working-day slot, which captured more of the achievable savings than 4 weeks of the slot alone
 * on both simulated years (bench/README.md "Optimiser").
 */
export const LOAD_SPREAD: { readonly weeks: number; readonly neighbours: number } = { weeks: 6, neighbours: 1 };

/**
 * The loads the plan's slots may see (docs/optimiser.md "Planning on the load's spread"): for each of
 * `slots` slots from `from`, the loads measured at the same time, and `neighbours` slots either side,
 * on days of the same type over the last `weeks`; where there are none, the load forecast alone.
 */
export function loadSamples(
  timezone: string,
  history: History,
  from: number,
  slots: number,
  weeks = LOAD_SPREAD.weeks,
  neighbours = LOAD_SPREAD.neighbours,
): number[][] {
  const zone = IANAZone.create(timezone);
  const same = dayTypeLoads(zone, history, from, weeks);
  const fallback = forecastLoad(timezone, history, from, slots, weeks);
  return Array.from({ length: slots }, (_, k) => {
    const { slot, weekday } = localSlot(zone, from + k * SLOT_MS);
    const loads: number[] = [];
    for (let d = -neighbours; d <= neighbours; d++) {
      const s = Math.min(SLOTS_PER_DAY - 1, Math.max(0, slot + d));
      if (d !== 0 && s === slot) continue;
      loads.push(...same[dayType(weekday) * SLOTS_PER_DAY + s]!);
    }
    return loads.length > 0 ? loads : [fallback[k]!];
  });
}

/** the loads measured at each slot of each day type (day type × 96 + slot) over the last `weeks` */
function dayTypeLoads(zone: IANAZone, history: History, from: number, weeks: number): number[][] {
  const seen: number[][] = Array.from({ length: 2 * SLOTS_PER_DAY }, () => []);
  for (let ts = from - weeks * 7 * DAY_MS; ts < from; ts += SLOT_MS) {
    const w = valueAt(history, ts);
    if (Number.isNaN(w)) continue;
    const { slot, weekday } = localSlot(zone, ts);
    seen[dayType(weekday) * SLOTS_PER_DAY + slot]!.push(w);
  }
  return seen;
}

/**
 * A day whose forecast PV is under this many times its forecast load is one the grid fills the
 * battery for: the PV a house uses as it comes leaves its midday surplus small. 1.5 captured more
 * of the achievable savings than 1 and 2 on both simulated years (bench/README.md "Optimiser").
 */
const GRID_DAY_PV_RATIO = 1.5;

/**
 * The load the plan is made on (the case's `loadW`, docs/optimiser.md "The forecasts"): the
 * load forecast, where a day of the horizon (each 24 h from `from`) has less forecast PV than
 * GRID_DAY_PV_RATIO times its forecast load the median of the day-type loads rather than their mean, and in surplus slots
 * PV less the expected surplus (surplusLoad). On such a day the evening's battery energy is
 * bought from the grid: a kWh bought for a spike that does not come is spent at a lower price
 * and one too few is imported at the peak, costs of the same order, and then the amount worth
 * buying is the median of the need, which for a house's spiky load lies below its mean
 * (bench/README.md "Optimiser": +3 points of the achievable on both simulated years). On a day
 * the sun fills the battery, a kWh too few means importing at the full price, and the mean plans better.
 */
export function planLoad(
  timezone: string,
  history: History,
  from: number,
  pvW: readonly number[],
  weeks = 4,
): number[] {
  const n = pvW.length;
  const meanLoad = forecastLoad(timezone, history, from, n, weeks);
  const medianLoad = forecastLoad(timezone, history, from, n, weeks, 'median');
  const load = meanLoad.slice();
  for (let b = 0; b < n; b += SLOTS_PER_DAY) {
    const end = Math.min(n, b + SLOTS_PER_DAY);
    let pv = 0;
    let need = 0;
    for (let k = b; k < end; k++) {
      pv += pvW[k]!;
      need += meanLoad[k]!;
    }
    if (pv < GRID_DAY_PV_RATIO * need) for (let k = b; k < end; k++) load[k] = medianLoad[k]!;
  }
  return surplusLoad(timezone, history, from, pvW, load, weeks);
}

/**
 * The load a plan should see where the forecast PV exceeds the forecast load: the PV less the
 * surplus expected there, the mean of max(0, PV − load) over the same time on days of the same
 * type in the last `weeks` (the loads that made the mean). A house's quarter hours are mostly below
 * their mean with a few appliance spikes above it, so the surplus that really comes is larger than
 * PV less the mean load, and a plan on the mean sees too little of it (bench/README.md
 * "Optimiser"). Elsewhere the load forecast as it is.
 */
export function surplusLoad(
  timezone: string,
  history: History,
  from: number,
  pvW: readonly number[],
  loadW: readonly number[],
  weeks = 4,
): number[] {
  const zone = IANAZone.create(timezone);
  const seen = dayTypeLoads(zone, history, from, weeks);
  return loadW.map((load, k) => {
    const pv = pvW[k]!;
    if (!(pv > load)) return load;
    const { slot, weekday } = localSlot(zone, from + k * SLOT_MS);
    const loads = seen[dayType(weekday) * SLOTS_PER_DAY + slot]!;
    if (loads.length === 0) return load;
    let surplus = 0;
    for (const l of loads) surplus += Math.max(0, pv - l);
    return Math.max(0, Math.round(pv - surplus / loads.length));
  });
}

export interface ForecastError {
  /** mean absolute error over the slots measured, W */
  maeW: number;
  /** maeW over the mean measured value (0.25 = 25 %); NaN when nothing was measured */
  relative: number;
  /** slots compared */
  slots: number;
}

/**
 * The error of a forecast over the last 7 days before `now`: each day forecast at its midnight
 * (UTC-aligned slots) from the history before it, against what was measured.
 */
export function forecastError(
  history: History,
  now: number,
  forecast: (from: number, slots: number) => number[],
): ForecastError {
  let abs = 0;
  let measured = 0;
  let n = 0;
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  for (let d = 7; d >= 1; d--) {
    const from = today - d * DAY_MS;
    const predicted = forecast(from, SLOTS_PER_DAY);
    predicted.forEach((p, k) => {
      const w = valueAt(history, from + k * SLOT_MS);
      if (Number.isNaN(w)) return;
      abs += Math.abs(p - w);
      measured += w;
      n++;
    });
  }
  return { maeW: n ? abs / n : Number.NaN, relative: measured > 0 ? abs / measured : Number.NaN, slots: n };
}

function mean(a: readonly number[]): number {
  let s = 0;
  for (const x of a) s += x;
  return s / a.length;
}

function median(a: readonly number[]): number {
  const s = [...a].sort((x, y) => x - y);
  const mid = (s.length - 1) / 2;
  return (s[Math.floor(mid)]! + s[Math.ceil(mid)]!) / 2;
}

function sum(a: Float64Array): number {
  let s = 0;
  for (const x of a) s += x;
  return s;
}
