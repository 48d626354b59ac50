/**
 * One slot's cost as an exact function of the energy it stores (docs/optimiser.md "The solver").
 *
 * For a slot, the flows (charge c, discharge d, PV used u, import i, export e) form a polytope: box
 * bounds, the power balance u + i + d = load + e + c, and c ≤ u without grid charging. The site's
 * limits in the slot are bounds too (flowBounds): the export limit on e, the generation limit on u,
 * the import limit on i above the house's own deficit; PV not used is curtailed, at curtailPrice. The slot's
 * least cost for a given stored-energy change x = (ηc·c − d/ηd)·h is the lower boundary of that
 * polytope's shadow on the (x, cost) plane: a convex piecewise-linear function whose corners are
 * shadows of the polytope's vertices. So the function is exactly the lower convex hull of the
 * vertices' (x, cost) points, and the flows at any x are the blend of the two corners around it.
 * With five variables and one equation a vertex has four variables at a bound (or c = u and two of
 * d, i, e at a bound), so there are at most 104 of them: enumerated, not searched.
 */
import type { OptimiserCase } from './case.js';

/** the five flows of a slot, W, in this order in every flow vector */
export const C = 0;
export const D = 1;
export const U = 2;
export const I = 3;
export const E = 4;

export interface SlotInput {
  loadW: number;
  pvW: number;
  importPrice: number;
  exportPrice: number;
  hours: number;
  maxChargeW: number;
  maxDischargeW: number;
  maxImportW: number;
  /** the envelope's maxExportW and the site's export limit in the slot, whichever is lower */
  maxExportW: number;
  /**
   * the site's import limit in the slot (Infinity: none). It caps what the battery's charge adds:
   * the house's own deficit (load less the PV it may use) is never counted against it, since limits
   * never shed the house (docs/limits.md "How a limit is held")
   */
  importLimitW: number;
  /** the site's generation limit in the slot (Infinity: none): PV used at most this */
  maxPvW: number;
  /** what a curtailed kWh of PV costs (≥ 0): 0, or with negativeExportPrice `ignore` the export it would have been */
  curtailPrice: number;
  chargeEfficiency: number;
  dischargeEfficiency: number;
  cycleCostPerKWh: number;
  gridCharge: boolean;
}

/** The slot's cost function: corners sorted by stored energy x (Wh), cost in currency, flows per corner. */
export interface SlotHull {
  x: Float64Array;
  cost: Float64Array;
  /** 5 flows per corner (C, D, U, I, E) */
  flows: Float64Array;
}

export type SlotLimits = Pick<SlotInput, 'maxExportW' | 'importLimitW' | 'maxPvW' | 'curtailPrice'>;

/** Slot t's limits: the envelope's and the site's export limit, the site's import and generation limits. */
export function slotLimits(c: OptimiserCase, t: number): SlotLimits {
  const l = c.limits;
  return {
    maxExportW: Math.min(c.grid.maxExportW, l?.exportW?.[t] ?? Number.POSITIVE_INFINITY),
    importLimitW: l?.importW?.[t] ?? Number.POSITIVE_INFINITY,
    maxPvW: l?.generationW?.[t] ?? Number.POSITIVE_INFINITY,
    // where the site exports at a negative price anyway, a curtailed kWh is that export: no saving,
    // and a hair more, so the plan does not show a curtailment the site will not make
    curtailPrice: l?.negativeExportPrice === 'ignore' ? Math.max(0, -c.exportPrice[t]!) + IGNORED_CURTAIL_PRICE : 0,
  };
}

/** The case's slots as the hull takes them. */
export function slotInputs(c: OptimiserCase): SlotInput[] {
  const hours = c.slotMinutes / 60;
  const b = c.battery;
  return c.importPrice.map((importPrice, t) => ({
    loadW: c.loadW[t]!,
    pvW: c.pvW[t]!,
    importPrice,
    exportPrice: c.exportPrice[t]!,
    hours,
    maxChargeW: b.maxChargeW,
    maxDischargeW: b.maxDischargeW,
    maxImportW: c.grid.maxImportW,
    ...slotLimits(c, t),
    chargeEfficiency: b.chargeEfficiency,
    dischargeEfficiency: b.dischargeEfficiency,
    cycleCostPerKWh: b.cycleCostPerKWh,
    gridCharge: c.grid.gridCharge,
  }));
}

/**
 * With negativeExportPrice `ignore`, a curtailed kWh costs this (currency/kWh) more than the export
 * it would have been: only a limit curtails there, never a tie between curtailing and exporting
 */
export const IGNORED_CURTAIL_PRICE = 1e-4;

/** balance coefficients: Σ a·v = load */
const A = [-1, 1, 1, 1, -1] as const;
/** slopes closer than this (currency per Wh; a price of 1 per kWh is 1e-3) count as equal */
const SLOPE_EPS = 1e-13;

/** The slot's exact cost function, or undefined when no flows can balance the slot (load too high). */
/** The slot's bounds on the five flows, W (C, D, U, I, E), its limits applied. */
export function flowBounds(s: SlotInput): number[] {
  const pv = Math.min(s.pvW, s.maxPvW);
  const imports = Math.min(s.maxImportW, Math.max(s.importLimitW, s.loadW - pv));
  return [s.maxChargeW, s.maxDischargeW, pv, imports, s.maxExportW];
}

export function slotHull(s: SlotInput): SlotHull | undefined {
  const ub = flowBounds(s);
  const scale = 1 + s.loadW + ub.reduce((a, b) => a + b, 0);
  const tol = 1e-9 * scale;
  const pts: number[] = []; // c, d, u, i, e per point
  const v = [0, 0, 0, 0, 0];
  const push = () => {
    if (!s.gridCharge && v[C]! > v[U]! + tol) return;
    pts.push(v[C]!, v[D]!, v[U]!, v[I]!, v[E]!);
  };
  for (let f = 0; f < 5; f++) {
    for (let mask = 0; mask < 16; mask++) {
      let rest = s.loadW;
      for (let k = 0, bit = 0; k < 5; k++) {
        if (k === f) continue;
        v[k] = mask & (1 << bit++) ? ub[k]! : 0;
        rest -= A[k]! * v[k]!;
      }
      const val = rest / A[f]!;
      if (val < -tol || val > ub[f]! + tol) continue;
      v[f] = Math.min(ub[f]!, Math.max(0, val));
      push();
    }
  }
  if (!s.gridCharge) {
    // c = u active: then i + d − e = load whatever c is, and c = u sits at 0 or at min(maxCharge, pv)
    for (const w of [0, Math.min(s.maxChargeW, ub[U]!)]) {
      for (const f of [D, I, E]) {
        const others = [D, I, E].filter((k) => k !== f);
        for (let mask = 0; mask < 4; mask++) {
          v[C] = w;
          v[U] = w;
          let rest = s.loadW;
          others.forEach((k, bit) => {
            v[k] = mask & (1 << bit) ? ub[k]! : 0;
            rest -= A[k]! * v[k]!;
          });
          const val = rest / A[f]!;
          if (val < -tol || val > ub[f]! + tol) continue;
          v[f] = Math.min(ub[f]!, Math.max(0, val));
          push();
        }
      }
    }
  }
  const n = pts.length / 5;
  if (n === 0) return undefined;
  const kWh = s.hours / 1000;
  const px = new Float64Array(n);
  const pc = new Float64Array(n);
  const key = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    const o = 5 * j;
    const c = pts[o]!;
    const d = pts[o + 1]!;
    px[j] = (s.chargeEfficiency * c - d / s.dischargeEfficiency) * s.hours;
    pc[j] =
      (s.importPrice * pts[o + 3]! -
        s.exportPrice * pts[o + 4]! +
        s.cycleCostPerKWh * d +
        s.curtailPrice * (s.pvW - pts[o + 2]!)) *
      kWh;
    // among equally cheap flows: no curtailing (an export that pays nothing still beats it: never
    // curtail more than a limit or a negative price needs), no charging and discharging at once, no
    // importing and exporting at once, unless they save money (then the hull has them anyway)
    key[j] = 8 * (s.pvW - pts[o + 2]!) + 4 * (c + d) + 2 * (pts[o + 3]! + pts[o + 4]!);
  }
  const order = Array.from({ length: n }, (_, j) => j).sort((a, b) => px[a]! - px[b]!);
  // one point per x: the cheapest, and of the cheapest the one with the fewest flows
  const xEps = 1e-9 * (1 + s.hours * (ub[C]! + ub[D]! / s.dischargeEfficiency));
  const costEps = 1e-12 * (1 + Math.abs(s.importPrice) + Math.abs(s.exportPrice) + s.curtailPrice) * scale * kWh;
  const uniq: number[] = [];
  for (let j = 0; j < n; ) {
    let best = order[j]!;
    let k = j + 1;
    while (k < n && px[order[k]!]! - px[order[j]!]! <= xEps) {
      const cand = order[k]!;
      const dc = pc[cand]! - pc[best]!;
      if (dc < -costEps || (dc <= costEps && key[cand]! < key[best]!)) best = cand;
      k++;
    }
    uniq.push(best);
    j = k;
  }
  // lower hull, left to right; a corner on the line between its neighbours is kept, so the flows
  // between two corners never blend a charge corner with a discharge corner the middle one separates
  const hull: number[] = [];
  for (const p of uniq) {
    while (hull.length >= 2) {
      const a = hull[hull.length - 2]!;
      const b = hull[hull.length - 1]!;
      const sab = (pc[b]! - pc[a]!) / (px[b]! - px[a]!);
      const sbp = (pc[p]! - pc[b]!) / (px[p]! - px[b]!);
      if (sbp < sab - SLOPE_EPS) hull.pop();
      else break;
    }
    hull.push(p);
  }
  const m = hull.length;
  const out: SlotHull = { x: new Float64Array(m), cost: new Float64Array(m), flows: new Float64Array(5 * m) };
  hull.forEach((p, k) => {
    out.x[k] = px[p]!;
    out.cost[k] = pc[p]!;
    for (let f = 0; f < 5; f++) out.flows[5 * k + f] = pts[5 * p + f]!;
  });
  return out;
}

/** The slot's least cost and flows at stored-energy change x (inside the hull's range; clamped to it). */
export function atEnergy(h: SlotHull, x: number, flows: Float64Array): number {
  const m = h.x.length;
  let k = 0;
  while (k < m - 2 && x > h.x[k + 1]!) k++;
  if (m === 1) {
    for (let f = 0; f < 5; f++) flows[f] = h.flows[f]!;
    return h.cost[0]!;
  }
  const x0 = h.x[k]!;
  const x1 = h.x[k + 1]!;
  const lam = Math.min(1, Math.max(0, (x - x0) / (x1 - x0)));
  for (let f = 0; f < 5; f++) flows[f] = (1 - lam) * h.flows[5 * k + f]! + lam * h.flows[5 * (k + 1) + f]!;
  return (1 - lam) * h.cost[k]! + lam * h.cost[k + 1]!;
}
