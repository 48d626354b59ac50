/**
 * Why a case has no plan, in words an installer can act on: the first slot whose load no source can
 * cover, the first slot where the battery would have to go below socMin, or an end SoC out of reach.
 * Walks the range of stored energy reachable slot by slot (each slot's widest charge and discharge).
 */
import type { OptimiserCase } from './case.js';
import { slotHull, slotInputs } from './slot-cost.js';

const pct = (wh: number, cap: number) => `${Math.round((1000 * wh) / cap) / 10} %`;

export function diagnoseInfeasible(c: OptimiserCase): string {
  const cap = c.battery.capacityWh;
  const min = (c.battery.socMin * cap) / 100;
  const max = (c.battery.socMax * cap) / 100;
  let lo = (c.battery.socInitial * cap) / 100;
  let hi = lo;
  const inputs = slotInputs(c);
  for (let t = 0; t < inputs.length; t++) {
    const s = inputs[t]!;
    const h = slotHull(s);
    if (!h) {
      return (
        `slot ${t}: load ${s.loadW} W is more than PV ${s.pvW} W + maxImportW ${s.maxImportW} W + ` +
        `maxDischargeW ${s.maxDischargeW} W can supply`
      );
    }
    const nlo = Math.max(min, lo + h.x[0]!);
    const nhi = Math.min(max, hi + h.x[h.x.length - 1]!);
    if (nlo > nhi + 1e-9 * (1 + cap)) {
      return (
        `slot ${t}: load ${s.loadW} W needs the battery to discharge, but it can hold no more than ` +
        `${pct(hi, cap)} by then and may not go below socMin ${c.battery.socMin} %`
      );
    }
    lo = nlo;
    hi = nhi;
  }
  return (
    `socFinalMin ${c.battery.socFinalMin} % is out of reach: from socInitial ${c.battery.socInitial} % ` +
    `the battery can hold at most ${pct(hi, cap)} at the end of the case`
  );
}
