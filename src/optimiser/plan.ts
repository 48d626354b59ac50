/**
 * The optimum as the plan the executor would follow (docs/optimiser.md "Reading the result"): per
 * slot the mode and battery power it would send, and the SoC expected at the slot's end. A slot
 * whose optimal battery power is what self-consumption would do anyway, or a discharge into the
 * house's load that exports nothing, is sent as `self-consumption`, so the device follows the
 * real surplus and load rather than the forecast's.
 */

import type { SlotBody } from '../control/plan-body.js';
import { baseline, selfConsumptionStep } from './baseline.js';
import type { OptimiserCase } from './case.js';
import { energyBounds, type Solution, solve } from './solve.js';

export type SlotMode = 'charge' | 'discharge' | 'hold' | 'self-consumption';

export interface PlanSlot {
  /** ISO 8601 start/end */
  interval: string;
  mode: SlotMode;
  /** battery power, W, always ≥ 0 (the mode gives the direction); 0 for hold and self-consumption */
  powerW: number;
  /** SoC expected at the slot's end, percent */
  socEnd: number;
  /**
   * PV the plan expects curtailed in the slot, W, where it is 1 W or more (a limit in force, or an
   * export that would cost): the site's limits loop does it (docs/limits.md), not the battery
   */
  curtailW?: number;
}

export interface OptimisedPlan {
  slots: PlanSlot[];
  /** the optimum's cost, currency */
  cost: number;
  /** the same case with plain self-consumption (baseline.ts), currency */
  baselineCost: number;
}

/** below this a battery power is no power: a hold (W) */
const IDLE_W = 1;

export const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
/** rounded for printing, and -0 printed as 0 */
export const money = (x: number) => Number(x.toFixed(6)) + 0;
/** a slot's `curtailW`, where there is one to say */
export const curtailed = (w: number): { curtailW?: number } => (w >= IDLE_W ? { curtailW: Math.round(w) } : {});

export function toPlan(c: OptimiserCase, sol: Solution, baselineCost: number): OptimisedPlan {
  const start = Date.parse(c.start);
  const slotMs = c.slotMinutes * 60_000;
  const bounds = energyBounds(c);
  let e = sol.energyStartWh;
  const slots = sol.slots.map((s, t): PlanSlot => {
    const net = s.chargeW - s.dischargeW;
    const sc = selfConsumptionStep(c, t, e, bounds);
    const scNet = sc.chargeW - sc.dischargeW;
    e = s.energyEndWh;
    let mode: SlotMode;
    // a discharge that serves only the forecast house load (none of it exported) follows the real
    // load: the battery covers the appliance spikes the forecast's mean leaves out (bench/README.md "Optimiser")
    const deficit = c.loadW[t]! - c.pvW[t]!;
    if (Math.abs(scNet) >= IDLE_W && Math.abs(net - scNet) < IDLE_W) mode = 'self-consumption';
    else if (net <= -IDLE_W && -net <= deficit + IDLE_W) mode = 'self-consumption';
    else if (net >= IDLE_W) mode = 'charge';
    else if (net <= -IDLE_W) mode = 'discharge';
    else mode = 'hold';
    return {
      interval: `${iso(start + t * slotMs)}/${iso(start + (t + 1) * slotMs)}`,
      mode,
      powerW: mode === 'charge' || mode === 'discharge' ? Math.round(Math.abs(net)) : 0,
      socEnd: Number(((100 * s.energyEndWh) / c.battery.capacityWh).toFixed(2)) + 0,
      ...curtailed(s.curtailedW),
    };
  });
  return { slots, cost: money(sol.cost), baselineCost: money(baselineCost) };
}

/** The case's optimal plan and its baseline: what `sitegw optimise` prints. */
export function optimise(c: OptimiserCase): OptimisedPlan {
  return toPlan(c, solve(c), baseline(c).cost);
}

/**
 * The plan's slots as control takes them, in the modes the device's control gives
 * (Control.slotModesOf). A mode it lacks becomes `self-consumption`, the device's own logic and
 * the executor's fallback everywhere: Huawei's and Victron's documents give no hold, and neither
 * a forcible charge at 0 W (Huawei: what it does with the PV surplus is not documented) nor a grid
 * setpoint (Victron: it follows the house, not the battery) holds the battery (docs/optimiser.md
 * "Devices without hold").
 */
export function slotBodies(slots: readonly PlanSlot[], modes: readonly SlotMode[]): SlotBody[] {
  return slots.map((s) => {
    if (!modes.includes(s.mode)) return { interval: s.interval, mode: 'self-consumption' };
    return s.mode === 'charge' || s.mode === 'discharge'
      ? { interval: s.interval, mode: s.mode, powerW: s.powerW }
      : { interval: s.interval, mode: s.mode };
  });
}
