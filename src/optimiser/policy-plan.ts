/**
 * The policy (policy.ts) as a plan the executor follows (docs/optimiser.md "Planning on the load's
 * spread"). The executor knows four modes, not the policy's power for each load: so each slot
 * takes the mode, and the power, whose expected cost over the slot's load samples plus the value
 * of the energy it leaves (V_{t+1}) is least. The candidates are self-consumption, hold, and a
 * charge or discharge at POWER_STEPS equal steps up to the limit; a mode the device lacks is no
 * candidate. Each slot's cost is what the executor would do on that load, as the meter would see
 * it, with the site's limits loop (docs/limits.md) curtailing PV the export limit or a negative
 * export price does not let out.
 */

import { SLOT_MODES } from '../control/plan-body.js';
import { baseline } from './baseline.js';
import type { OptimiserCase } from './case.js';
import { curtailed, iso, money, type OptimisedPlan, type PlanSlot, type SlotMode } from './plan.js';
import { type Policy, policyValue, type Scenario, type Spread, scenariosAt, solvePolicy } from './policy.js';
import { slotLimits } from './slot-cost.js';

/** charge and discharge are tried at this many equal steps up to their limit: 250 W for a 5 kW battery */
const POWER_STEPS = 20;

export interface ModeChoice {
  mode: SlotMode;
  /** W for charge and discharge, else 0 */
  powerW: number;
  /** expected stored energy change, Wh */
  x: number;
  /** expected cost of the slot, currency */
  cost: number;
  /** expected PV curtailed in the slot, W */
  curtailW: number;
}

/** the battery's AC power (W, + charging) that changes the stored energy by x Wh over a slot, and back */
export function batteryPowerW(c: OptimiserCase, x: number): number {
  const h = c.slotMinutes / 60;
  return x > 0 ? x / (c.battery.chargeEfficiency * h) : (x * c.battery.dischargeEfficiency) / h;
}

const storedWh = (c: OptimiserCase, w: number): number => {
  const h = c.slotMinutes / 60;
  return w > 0 ? w * c.battery.chargeEfficiency * h : (w * h) / c.battery.dischargeEfficiency;
};

/** the stored energy change the executor makes in `mode` at `powerW` from e (Wh) */
export function executorX(
  c: OptimiserCase,
  t: number,
  bounds: { min: number; max: number },
  e: number,
  mode: SlotMode,
  powerW: number,
  loadW: number,
  pvW: number,
): number {
  const b = c.battery;
  const h = c.slotMinutes / 60;
  const room = Math.max(0, (bounds.max - e) / (b.chargeEfficiency * h));
  const left = Math.max(0, ((e - bounds.min) * b.dischargeEfficiency) / h);
  const lim = slotLimits(c, t);
  const pv = Math.min(pvW, lim.maxPvW);
  const surplus = pv - loadW;
  const sc = surplus > 0 ? Math.min(surplus, b.maxChargeW, room) : -Math.min(-surplus, b.maxDischargeW, left);
  let w = 0;
  // an optimiser's charge also stores the real surplus beyond its power (control's takeSurplus);
  // control sheds a charge to keep the import under the site's import limit
  const importRoom = lim.importLimitW + surplus;
  if (mode === 'charge') w = Math.max(Math.min(powerW, room, Math.max(0, importRoom)), sc);
  else if (mode === 'discharge') w = -Math.min(powerW, left);
  else if (mode === 'self-consumption') w = sc;
  return storedWh(c, w);
}

/**
 * Slot t's cost at the meter when the battery stores x Wh on this load and PV, and the PV the
 * limits loop curtails: the generation limit's share, and the surplus over the export limit, or all
 * of it at a negative export price (the limits' price source; not with negativeExportPrice `ignore`)
 */
export function meterCost(
  c: OptimiserCase,
  t: number,
  x: number,
  loadW: number,
  pvW: number,
): { cost: number; curtailW: number } {
  const h = c.slotMinutes / 60;
  const lim = slotLimits(c, t);
  const w = batteryPowerW(c, x);
  const pv = Math.min(pvW, lim.maxPvW);
  const net = loadW - pv + w;
  const imp = Math.max(0, net);
  const out = Math.max(0, -net);
  const priceHolds = c.exportPrice[t]! < 0 && c.limits?.negativeExportPrice !== 'ignore';
  const exp = priceHolds ? 0 : Math.min(lim.maxExportW, out);
  const curtailW = pvW - pv + Math.min(pv, out - exp);
  const cost =
    (c.importPrice[t]! * imp -
      c.exportPrice[t]! * exp +
      c.battery.cycleCostPerKWh * Math.max(0, -w) +
      lim.curtailPrice * curtailW) *
    h;
  return { cost: cost / 1000, curtailW };
}

/** The mode for slot t at stored energy e, of those the device has. */
export function chooseMode(
  c: OptimiserCase,
  p: Policy,
  t: number,
  e: number,
  scenarios: readonly Scenario[],
  modes: readonly SlotMode[],
): ModeChoice {
  const b = c.battery;
  const bounds = { min: p.min, max: p.max };
  const pvW = c.pvW[t]!;
  const cands: { mode: SlotMode; powerW: number }[] = [];
  for (const mode of ['self-consumption', 'hold'] as const) if (modes.includes(mode)) cands.push({ mode, powerW: 0 });
  const maxCharge = c.grid.gridCharge ? b.maxChargeW : Math.min(b.maxChargeW, pvW);
  if (modes.includes('charge'))
    for (let k = 1; k <= POWER_STEPS; k++)
      cands.push({ mode: 'charge', powerW: Math.round((k * maxCharge) / POWER_STEPS) });
  if (modes.includes('discharge'))
    for (let k = 1; k <= POWER_STEPS; k++)
      cands.push({ mode: 'discharge', powerW: Math.round((k * b.maxDischargeW) / POWER_STEPS) });
  // self-consumption is always a mode (Control.slotModesOf), and the choice where nothing is cheaper
  let best: ModeChoice = { mode: 'self-consumption', powerW: 0, x: 0, cost: 0, curtailW: 0 };
  let bestTotal = Infinity;
  for (const k of cands) {
    let x = 0;
    let cost = 0;
    let curtailW = 0;
    let total = 0;
    for (const s of scenarios) {
      const xs = executorX(c, t, bounds, e, k.mode, k.powerW, s.loadW, s.pvW);
      const m = meterCost(c, t, xs, s.loadW, s.pvW);
      x += xs;
      cost += m.cost;
      curtailW += m.curtailW;
      total += m.cost + policyValue(p, t + 1, e + xs);
    }
    const n = scenarios.length;
    // on a tie the earlier candidate: self-consumption, then hold, then the others
    if (total / n < bestTotal - 1e-12) {
      best = { mode: k.mode, powerW: k.powerW, x: x / n, cost: cost / n, curtailW: curtailW / n };
      bestTotal = total / n;
    }
  }
  return best;
}

export interface PolicyPlan extends OptimisedPlan {
  /**
   * per slot, W, + charging (AC side), the chart's: a charge's or discharge's power as sent, 0
   * for hold, and for self-consumption the power it is expected to take on the samples
   */
  batteryW: number[];
}

/**
 * The plan from a policy: each slot's mode chosen at the stored energy expected from the slots
 * before it (the daemon plans again every quarter hour from the SoC it reads, so only the first
 * slot is chosen at a measured one). `cost` is the expected cost over the samples; the baseline
 * is plain self-consumption on the case's loadW.
 */
export function planFromPolicy(
  c: OptimiserCase,
  policy: Policy,
  spread: Spread,
  modes: readonly SlotMode[] = SLOT_MODES,
): PolicyPlan {
  const start = Date.parse(c.start);
  const slotMs = c.slotMinutes * 60_000;
  const b = c.battery;
  let e = Math.min(policy.max, Math.max(policy.min, (b.socInitial / 100) * b.capacityWh));
  let cost = 0;
  const batteryW: number[] = [];
  const slots = c.importPrice.map((_, t): PlanSlot => {
    const m = chooseMode(c, policy, t, e, scenariosAt(c, spread, t), modes);
    e = Math.min(policy.max, Math.max(policy.min, e + m.x));
    cost += m.cost;
    // a charge or discharge is the power sent; self-consumption the expected power on the samples
    const sent =
      m.mode === 'charge'
        ? m.powerW
        : m.mode === 'discharge'
          ? -m.powerW
          : m.mode === 'hold'
            ? 0
            : batteryPowerW(c, m.x);
    batteryW.push(Math.round(sent) + 0);
    return {
      interval: `${iso(start + t * slotMs)}/${iso(start + (t + 1) * slotMs)}`,
      mode: m.mode,
      powerW: m.powerW,
      socEnd: Number(((100 * e) / b.capacityWh).toFixed(2)) + 0,
      ...curtailed(m.curtailW),
    };
  });
  return { slots, cost: money(cost), baselineCost: money(baseline(c).cost), batteryW };
}

/** The policy and its plan at once: the bench's and the tests' way in. */
export function policyPlan(c: OptimiserCase, spread: Spread, modes: readonly SlotMode[] = SLOT_MODES): PolicyPlan {
  return planFromPolicy(c, solvePolicy(c, spread), spread, modes);
}
