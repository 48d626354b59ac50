/**
 * What the status page's plan chart draws (docs/optimiser.md "Reading the chart"): per slot of the
 * optimiser's plan, the case's prices and forecasts beside the battery power and SoC the plan
 * expects. Built from the case and the plan the loop sent to control, so the chart shows the
 * numbers the plan was made from, not a second guess at them.
 */
import type { OptimiserCase } from './case.js';
import type { OptimisedPlan } from './plan.js';
import type { PolicyPlan } from './policy-plan.js';

export interface PlanChartSlot {
  /** ISO 8601 start of the slot */
  start: string;
  importPrice: number;
  exportPrice: number;
  pvW: number;
  loadW: number;
  /** the plan's battery power, W, + charging (AC side): policy-plan.ts PolicyPlan.batteryW */
  batteryW: number;
  /** PV the plan expects curtailed, W: the site's limits, or a negative export price (PlanSlot.curtailW) */
  curtailW: number;
  /** the SoC the plan expects at the slot's end, percent */
  socEnd: number;
  mode: OptimisedPlan['slots'][number]['mode'];
}

export interface PlanChart {
  deviceId: string;
  /** when the loop made the plan (ISO) */
  madeAt: string;
  slotMinutes: number;
  /** SoC at the plan's start, percent */
  socStart: number;
  /** the plan's cost and plain self-consumption's on the same forecast, currency */
  cost: number;
  baselineCost: number;
  slots: PlanChartSlot[];
}

export function planChart(deviceId: string, madeAtMs: number, c: OptimiserCase, plan: PolicyPlan): PlanChart {
  return {
    deviceId,
    madeAt: new Date(madeAtMs).toISOString(),
    slotMinutes: c.slotMinutes,
    socStart: c.battery.socInitial,
    cost: plan.cost,
    baselineCost: plan.baselineCost,
    slots: plan.slots.map((s, t) => ({
      start: s.interval.split('/')[0]!,
      importPrice: c.importPrice[t]!,
      exportPrice: c.exportPrice[t]!,
      pvW: c.pvW[t]!,
      loadW: c.loadW[t]!,
      batteryW: plan.batteryW[t]!,
      curtailW: s.curtailW ?? 0,
      socEnd: s.socEnd,
      mode: s.mode,
    })),
  };
}
