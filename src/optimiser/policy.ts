/**
 * The battery policy on the load's spread (docs/optimiser.md "Planning on the load's spread"):
 * backward dynamic programming over stored energy like solve.ts, but each slot's load is one of
 * several samples (the same quarter hour on recent days of the same type), seen before the slot's
 * battery power is chosen, as a battery following its meter sees it. Then
 * V_t(E) = mean over the slot's samples s of min_x G_t^s(x) + V_{t+1}(E + x),
 * still convex in E, kept on a grid of stored energy. The end value charges a steep price per Wh
 * short of socFinalMin rather than refusing: some sample may not reach it.
 */
import type { OptimiserCase } from './case.js';
import { atEnergy, type SlotHull, type SlotInput, slotHull, slotInputs } from './slot-cost.js';
import { convolve, cut, decisionAt, energyBounds, type Pieces } from './solve.js';

export interface Policy {
  /** stored energy of grid point 0, Wh */
  min: number;
  max: number;
  step: number;
  /** V_t at the grid points, t = 0..T; V_T is the end's penalty */
  values: Float64Array[];
  inputs: SlotInput[];
}

/**
 * The grid of stored energy, Wh: 20 Wh is a few tenths of a cent at any household price, and
 * keeps a 48-hour policy well under a second of a Pi's core (bench/README.md "Optimiser").
 */
const GRID_WH = 20;

/** at most this many scenarios per slot: more quantiles add time, not value */
const MAX_SAMPLES = 12;

/** What each slot may see: per slot the loads (W) it was measured at on recent days. */
export interface Spread {
  loadW: readonly (readonly number[])[];
}

export interface Scenario {
  loadW: number;
  pvW: number;
}

/**
 * Slot t's equally likely (load, PV) pairs: its load samples folded to MAX_SAMPLES, at the case's
 * PV forecast (a PV spread from each recent day's weather was tried and lost: bench/README.md
 * "Optimiser"). A slot without samples has the case's load forecast.
 */
export function scenariosAt(c: OptimiserCase, spread: Spread, t: number): Scenario[] {
  const loads = spread.loadW[t]?.length ? spread.loadW[t]! : [c.loadW[t]!];
  const pvW = c.pvW[t]!;
  return quantileSamples(loads).map((loadW) => ({ loadW, pvW }));
}

/**
 * The samples as at most MAX_SAMPLES equally likely values: sorted, their probability cut into
 * MAX_SAMPLES equal parts, and each part's mean (a sample split between two parts counts in both
 * by its share), so the mean and the spread's shape stay.
 */
export function quantileSamples(samples: readonly number[], parts = MAX_SAMPLES): number[] {
  const s = [...samples].sort((a, b) => a - b);
  const n = s.length;
  if (n <= parts) return s;
  const out = new Array<number>(parts).fill(0);
  for (let k = 0; k < n; k++) {
    // sample k holds [k/n, (k+1)/n) of the probability; part q holds [q/parts, (q+1)/parts)
    const lo = k / n;
    const hi = (k + 1) / n;
    for (let q = Math.floor(lo * parts); q < parts && q / parts < hi; q++) {
      const overlap = Math.min(hi, (q + 1) / parts) - Math.max(lo, q / parts);
      if (overlap > 0) out[q]! += s[k]! * overlap * parts;
    }
  }
  return out;
}

function piecesOf(v: Float64Array, min: number, step: number): Pieces {
  const n = v.length - 1;
  const slope = new Float64Array(n);
  let prev = -Infinity;
  for (let i = 0; i < n; i++) {
    // the mean of convex functions is convex; sampling can wobble by rounding
    const s = Math.max(prev, (v[i + 1]! - v[i]!) / step);
    slope[i] = s;
    prev = s;
  }
  return { left: min, value: v[0]!, slope, len: new Float64Array(n).fill(step), mine: new Uint8Array(n), wLeft: 0 };
}

/** adds p (extended past its ends with slope `steep`) at each grid point to `into`, times `weight` */
function addSampled(p: Pieces, into: Float64Array, min: number, step: number, steep: number, weight: number): void {
  let k = 0;
  let at = p.left;
  let value = p.value;
  let end = p.left;
  for (const l of p.len) end += l;
  for (let i = 0; i < into.length; i++) {
    const e = min + i * step;
    let v: number;
    if (e <= p.left) v = p.value + (p.left - e) * steep;
    else {
      const to = Math.min(e, end);
      while (k < p.slope.length && at + p.len[k]! <= to) {
        value += p.len[k]! * p.slope[k]!;
        at += p.len[k]!;
        k++;
      }
      v = value + (k < p.slope.length ? (to - at) * p.slope[k]! : 0) + Math.max(0, e - end) * steep;
    }
    into[i]! += weight * v;
  }
}

/** slots of the backward pass between two yields of policyPasses */
const CHUNK_SLOTS = 4;

/**
 * The policy for a case whose slot t may see any of its scenarios (scenariosAt, equally likely).
 * A generator that yields every CHUNK_SLOTS slots: on a Pi without JIT the whole pass takes a
 * second or more, and the daemon lets polls and requests run between chunks (loop.ts) rather
 * than let a device's timeout fire behind it.
 */
export function* policyPasses(c: OptimiserCase, spread: Spread, step = GRID_WH): Generator<void, Policy, void> {
  const inputs = slotInputs(c);
  const T = inputs.length;
  const b = energyBounds(c);
  const n = Math.max(2, Math.ceil((b.max - b.min) / step) + 1);
  const st = (b.max - b.min) / (n - 1) || step;
  let maxPrice = 0;
  for (const s of inputs) maxPrice = Math.max(maxPrice, Math.abs(s.importPrice), Math.abs(s.exportPrice));
  // a Wh short of the end, or beyond what a slot can reach, costs far more than any price
  const steep = (10 * (maxPrice + 1)) / 1000;
  const values: Float64Array[] = new Array(T + 1);
  const end = new Float64Array(n);
  for (let i = 0; i < n; i++) end[i] = Math.max(0, b.final - (b.min + i * st)) * steep;
  values[T] = end;
  const eps = 1e-9 * (1 + b.max);
  for (let t = T - 1; t >= 0; t--) {
    if ((T - 1 - t) % CHUNK_SLOTS === CHUNK_SLOTS - 1) yield;
    const next = piecesOf(values[t + 1]!, b.min, st);
    const v = new Float64Array(n);
    const parts: Pieces[] = [];
    for (const { loadW, pvW } of scenariosAt(c, spread, t)) {
      const h = slotHull({ ...inputs[t]!, loadW, pvW });
      if (!h) continue;
      const p = convolve(h, next);
      if (cut(p, b.min, b.max, eps)) parts.push(p);
    }
    for (const p of parts) addSampled(p, v, b.min, st, steep, 1 / parts.length);
    // no sample the slot can meet (a load beyond every source): as dear as falling short at the end
    if (parts.length === 0) for (let i = 0; i < n; i++) v[i] = values[t + 1]![i]! + (b.max - b.min) * steep;
    values[t] = v;
  }
  return { min: b.min, max: b.max, step: st, values, inputs };
}

/** policyPasses run to the end at once: the bench and the tests. */
export function solvePolicy(c: OptimiserCase, spread: Spread, step = GRID_WH): Policy {
  const g = policyPasses(c, spread, step);
  for (;;) {
    const r = g.next();
    if (r.done) return r.value;
  }
}

/** V_t(e): the expected cost from slot t on with e Wh stored, between the grid's points */
export function policyValue(p: Policy, t: number, e: number): number {
  const v = p.values[t]!;
  const f = Math.min(v.length - 1, Math.max(0, (e - p.min) / p.step));
  const i = Math.min(v.length - 2, Math.floor(f));
  return v[i]! + (f - i) * (v[i + 1]! - v[i]!);
}

export interface PolicyStep {
  /** stored energy change over the slot, Wh (> 0 charges) */
  x: number;
  /** the five flows, W: C, D, U, I, E (slot-cost.ts) */
  flows: Float64Array;
  cost: number;
  hull: SlotHull;
}

/**
 * What the policy itself does in slot t from stored energy e when the slot's load is loadW (and
 * PV pvW): a power for each load, which no executor mode gives. The bench's ceiling for the
 * modes (bench/lib/optimiser-year.ts, plan 'ideal').
 */
export function policyStep(p: Policy, t: number, e: number, loadW: number, pvW?: number): PolicyStep | undefined {
  const next = piecesOf(p.values[t + 1]!, p.min, p.step);
  const input = { ...p.inputs[t]!, loadW, ...(pvW === undefined ? {} : { pvW }) };
  const hull = slotHull(input);
  if (!hull) return undefined;
  const pieces = convolve(hull, next);
  const eps = 1e-9 * (1 + p.max);
  if (!cut(pieces, p.min, p.max, eps)) return undefined;
  let end = pieces.left;
  for (const l of pieces.len) end += l;
  const w = decisionAt(pieces, Math.min(end, Math.max(pieces.left, e)), eps);
  if (w === undefined) return undefined;
  const x = Math.min(hull.x[hull.x.length - 1]!, Math.max(hull.x[0]!, -w));
  const flows = new Float64Array(5);
  const cost = atEnergy(hull, x, flows);
  return { x, flows, cost, hull };
}
