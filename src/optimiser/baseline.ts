/**
 * What the same case costs with plain self-consumption, the battery's own logic the plan is measured
 * against: charge only from surplus PV, discharge only into the house load, within socMin..socMax and
 * the power limits; the rest is exported (up to maxExportW, beyond it PV is curtailed as an export
 * limiter does) or imported. It knows no prices, so it does not curtail at negative prices, and no
 * grid limits on import: a house takes what it needs. socFinalMin does not bind it.
 */
import type { OptimiserCase } from './case.js';
import { energyBounds } from './solve.js';

export interface BaselineSlot {
  chargeW: number;
  dischargeW: number;
  importW: number;
  exportW: number;
  energyEndWh: number;
  cost: number;
}

/** The self-consumption step for one slot from stored energy e (Wh). */
export function selfConsumptionStep(
  c: OptimiserCase,
  t: number,
  e: number,
  bounds: { min: number; max: number },
): BaselineSlot {
  const h = c.slotMinutes / 60;
  const b = c.battery;
  const surplus = c.pvW[t]! - c.loadW[t]!;
  let chargeW = 0;
  let dischargeW = 0;
  if (surplus > 0) chargeW = Math.max(0, Math.min(surplus, b.maxChargeW, (bounds.max - e) / (b.chargeEfficiency * h)));
  else dischargeW = Math.max(0, Math.min(-surplus, b.maxDischargeW, ((e - bounds.min) * b.dischargeEfficiency) / h));
  const net = surplus - chargeW + dischargeW;
  const exportW = net > 0 ? Math.min(net, c.grid.maxExportW) : 0;
  const importW = net < 0 ? -net : 0;
  const energyEndWh = e + (b.chargeEfficiency * chargeW - dischargeW / b.dischargeEfficiency) * h;
  const cost =
    ((c.importPrice[t]! * importW - c.exportPrice[t]! * exportW + b.cycleCostPerKWh * dischargeW) * h) / 1000;
  return { chargeW, dischargeW, importW, exportW, energyEndWh, cost };
}

export function baseline(c: OptimiserCase): { slots: BaselineSlot[]; cost: number } {
  const bounds = energyBounds(c);
  let e = bounds.start;
  let cost = 0;
  const slots: BaselineSlot[] = [];
  for (let t = 0; t < c.importPrice.length; t++) {
    const s = selfConsumptionStep(c, t, e, bounds);
    slots.push(s);
    cost += s.cost;
    e = s.energyEndWh;
  }
  return { slots, cost };
}
