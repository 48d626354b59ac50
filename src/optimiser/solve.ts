/**
 * The cheapest plan for one case, exactly (docs/optimiser.md "The solver"). A pure function: no
 * I/O, no clock.
 *
 * Backward dynamic programming over stored energy, with no grid: V_t(E), the least cost from slot t
 * on with E Wh stored, is convex and piecewise linear in E (the value of a linear programme as a
 * function of its right-hand side). With G_t the slot's exact cost of storing x Wh (slot-cost.ts),
 * V_t(E) = min_x G_t(x) + V_{t+1}(E + x), an infimal convolution of two convex piecewise-linear
 * functions, whose pieces are the two functions' pieces merged by slope; then cut to
 * [socMin, socMax]. Each merged piece remembers whether it came from the slot, so the forward pass
 * reads the optimal x_t at the actual E_t off the list. The result is the linear programme's optimum
 * up to rounding, in O(T·K) for T slots and K ≤ ~10·T pieces.
 */
import type { OptimiserCase } from './case.js';
import { diagnoseInfeasible } from './feasibility.js';
import { atEnergy, type SlotHull, slotHull, slotInputs } from './slot-cost.js';

/** The solver's view of one slot of the optimum: all five flows (W) and the energy stored after it. */
export interface SlotFlows {
  chargeW: number;
  dischargeW: number;
  pvUsedW: number;
  importW: number;
  exportW: number;
  /** PV forecast but not used: curtailed (a limit, or an export that would cost), W */
  curtailedW: number;
  /** stored energy at the end of the slot, Wh */
  energyEndWh: number;
  /** the slot's cost, currency */
  cost: number;
}

export interface Solution {
  slots: SlotFlows[];
  /** Σ slot costs, currency */
  cost: number;
  energyStartWh: number;
}

/** The case cannot be met at all: a load no source can cover, an end SoC out of reach. */
export class InfeasibleCaseError extends Error {
  readonly code = 'CASE_INFEASIBLE';
}

/** One value function V_t: from `left` (value `value`) up, pieces of `slope` over `len`. */
export interface Pieces {
  left: number;
  value: number;
  slope: Float64Array;
  len: Float64Array;
  /** 1 where the piece is the slot's own (moves the slot's decision), 0 where it is the future's */
  mine: Uint8Array;
  /** the slot's decision variable w = −x at `left` */
  wLeft: number;
}

export function energyBounds(c: OptimiserCase): { min: number; max: number; final: number; start: number } {
  const cap = c.battery.capacityWh / 100;
  const b = c.battery;
  return {
    min: b.socMin * cap,
    max: b.socMax * cap,
    final: Math.max(b.socFinalMin, b.socMin) * cap,
    start: b.socInitial * cap,
  };
}

export function solve(c: OptimiserCase): Solution {
  const inputs = slotInputs(c);
  const T = inputs.length;
  const bounds = energyBounds(c);
  const hulls: SlotHull[] = [];
  for (let t = 0; t < T; t++) {
    const h = slotHull(inputs[t]!);
    if (!h) throw new InfeasibleCaseError(diagnoseInfeasible(c));
    hulls.push(h);
  }
  if (bounds.final > bounds.max + 1e-9) {
    throw new InfeasibleCaseError(
      `socFinalMin ${c.battery.socFinalMin} is above socMax ${c.battery.socMax}: no plan can end there`,
    );
  }
  const eps = 1e-9 * (1 + bounds.max);
  const fn: Pieces[] = new Array(T);
  let next: Pieces = {
    left: bounds.final,
    value: 0,
    slope: Float64Array.of(0),
    len: Float64Array.of(Math.max(0, bounds.max - bounds.final)),
    mine: Uint8Array.of(0),
    wLeft: 0,
  };
  for (let t = T - 1; t >= 0; t--) {
    const merged = convolve(hulls[t]!, next);
    if (!cut(merged, bounds.min, bounds.max, eps)) throw new InfeasibleCaseError(diagnoseInfeasible(c));
    fn[t] = merged;
    next = merged;
  }
  const slots: SlotFlows[] = [];
  const flows = new Float64Array(5);
  let e = bounds.start;
  let total = 0;
  for (let t = 0; t < T; t++) {
    const p = fn[t]!;
    const w = decisionAt(p, e, eps);
    if (w === undefined) throw new InfeasibleCaseError(diagnoseInfeasible(c));
    const h = hulls[t]!;
    const x = Math.min(h.x[h.x.length - 1]!, Math.max(h.x[0]!, -w));
    const cost = atEnergy(h, x, flows);
    e = Math.min(bounds.max, Math.max(bounds.min, e + x));
    total += cost;
    slots.push({
      chargeW: flows[0]!,
      dischargeW: flows[1]!,
      pvUsedW: flows[2]!,
      importW: flows[3]!,
      exportW: flows[4]!,
      curtailedW: Math.max(0, c.pvW[t]! - flows[2]!),
      energyEndWh: e,
      cost,
    });
  }
  return { slots, cost: total, energyStartWh: bounds.start };
}

/**
 * V_t = Ĝ □ V_{t+1} with Ĝ(w) = G_t(−w): the slot's pieces reversed and negated, merged by slope with
 * the future's. On a tie the future's piece goes first: both orders are optimal, a fixed one keeps
 * the plan the same for the same case.
 */
export function convolve(h: SlotHull, next: Pieces): Pieces {
  const m = h.x.length - 1;
  const gs = new Float64Array(m);
  const gl = new Float64Array(m);
  let prev = -Infinity;
  for (let k = 0; k < m; k++) {
    // Ĝ's k-th piece is G's (m−1−k)-th, walked backwards
    const j = m - 1 - k;
    const len = h.x[j + 1]! - h.x[j]!;
    let s = -(h.cost[j + 1]! - h.cost[j]!) / len;
    if (s < prev) s = prev; // the hull's kept collinear corners may wobble by rounding
    gs[k] = s;
    gl[k] = len;
    prev = s;
  }
  const K = next.slope.length;
  const slope = new Float64Array(m + K);
  const len = new Float64Array(m + K);
  const mine = new Uint8Array(m + K);
  let a = 0;
  let b = 0;
  for (let o = 0; o < m + K; o++) {
    if (b < K && (a >= m || next.slope[b]! <= gs[a]!)) {
      slope[o] = next.slope[b]!;
      len[o] = next.len[b]!;
      b++;
    } else {
      slope[o] = gs[a]!;
      len[o] = gl[a]!;
      mine[o] = 1;
      a++;
    }
  }
  const wLeft = -h.x[m]!;
  return { left: wLeft + next.left, value: h.cost[m]! + next.value, slope, len, mine, wLeft };
}

/** Cuts the function to [lo, hi]; false when nothing is left. */
export function cut(p: Pieces, lo: number, hi: number, eps: number): boolean {
  let k = 0;
  const n = p.slope.length;
  if (p.left < lo) {
    let need = lo - p.left;
    while (k < n && need > 0) {
      const take = Math.min(need, p.len[k]!);
      p.value += take * p.slope[k]!;
      if (p.mine[k]) p.wLeft += take;
      p.len[k] = p.len[k]! - take;
      need -= take;
      if (p.len[k]! <= 0) k++;
    }
    if (need > eps) return false;
    p.left = lo;
  }
  if (p.left > hi + eps) return false;
  let room = Math.max(0, hi - p.left);
  let end = k;
  while (end < n && room > 0) {
    const take = Math.min(room, p.len[end]!);
    p.len[end] = take;
    room -= take;
    end++;
  }
  p.slope = p.slope.slice(k, end);
  p.len = p.len.slice(k, end);
  p.mine = p.mine.slice(k, end);
  return true;
}

/** The slot's optimal w = −x at stored energy e, or undefined when e is outside the function. */
export function decisionAt(p: Pieces, e: number, eps: number): number | undefined {
  let rest = e - p.left;
  if (rest < -eps) return undefined;
  let w = p.wLeft;
  for (let k = 0; k < p.slope.length && rest > 0; k++) {
    const take = Math.min(rest, p.len[k]!);
    if (p.mine[k]) w += take;
    rest -= take;
  }
  if (rest > eps) return undefined;
  return w;
}
