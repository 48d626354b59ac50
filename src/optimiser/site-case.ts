/**
 * The optimiser case the daemon builds from its own data (docs/optimiser.md "The daemon's loop"):
 * prices from the site's tariff, PV and load forecasts from the stored 15-minute history, the
 * battery from the control envelope and the capacity the blocks told. A pure function of what it
 * is handed, so a unit test builds the same case the loop does.
 */
import type { ControlConfig } from '../config/types.js';
import type { LimitsInForce } from '../limits/sources.js';
import type { PriceLookup } from '../tariffs/site-prices.js';
import type { OptimiserCase } from './case.js';
import { forecastPv, type History, loadSamples, type PvSite, planLoad } from './forecast.js';
import type { Spread } from './policy.js';

export const SLOT_MS = 900_000;
/** 48 hours: two days of sun and two evening peaks, the horizon Dynamic ESS and EMHASS use too */
export const HORIZON_SLOTS = 192;
/** the highest SoC the plan is asked to end at: the horizon's end values stored energy at nothing */
const FINAL_SOC_CAP = 50;

export interface SiteCaseInput {
  now: number;
  envelope: ControlConfig;
  /** the storage system's blocks together, Wh */
  capacityWh: number;
  socPct: number;
  prices: PriceLookup;
  pvSite: PvSite;
  pvHistory: History;
  loadHistory: History;
  /**
   * the site's limits a plan keeps to in [start, end) (limits' SiteLimits.over: site.yaml, the
   * schedule, the grid operator's in the running slot); absent: none
   */
  limits?: (start: number, end: number) => LimitsInForce;
  /** site.yaml limits.negativeExportPrice */
  negativeExportPrice?: 'curtail' | 'ignore';
}

/** The limits per slot as the case takes them, or nothing where no slot has any. */
export function caseLimits(i: SiteCaseInput, start: number, n: number): OptimiserCase['limits'] {
  const per = {
    exportW: [] as (number | null)[],
    importW: [] as (number | null)[],
    generationW: [] as (number | null)[],
  };
  for (let k = 0; k < n; k++) {
    const l = i.limits?.(start + k * SLOT_MS, start + (k + 1) * SLOT_MS) ?? {};
    for (const name of ['exportW', 'importW', 'generationW'] as const) per[name].push(l[name]?.watts ?? null);
  }
  const out: NonNullable<OptimiserCase['limits']> = {};
  for (const name of ['exportW', 'importW', 'generationW'] as const)
    if (per[name].some((w) => w !== null)) out[name] = per[name];
  if (i.negativeExportPrice === 'ignore') out.negativeExportPrice = 'ignore';
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The case from the current slot on with the load samples of each slot, or a reason why there is none. The horizon ends at the
 * first slot the tariff has no import price for (a dynamic tariff knows only the day ahead).
 */
export function siteCase(i: SiteCaseInput): { case: OptimiserCase; spread: Spread } | { none: string } {
  const start = Math.floor(i.now / SLOT_MS) * SLOT_MS;
  const importPrice: number[] = [];
  const exportPrice: number[] = [];
  for (let k = 0; k < HORIZON_SLOTS; k++) {
    const p = i.prices(start + k * SLOT_MS);
    if (p.importPrice === undefined) break;
    importPrice.push(p.importPrice);
    // a tariff without a feed-in price pays nothing for export
    exportPrice.push(p.exportPrice ?? 0);
  }
  if (importPrice.length === 0)
    return { none: `the site's tariff has no import price for ${new Date(start).toISOString()}` };
  if (!(i.capacityWh > 0)) return { none: 'the battery has not told its capacity yet' };
  const n = importPrice.length;
  const e = i.envelope;
  const soc = Math.min(100, Math.max(0, i.socPct));
  // no discharge command goes below reserveSoc (docs/control.md); a battery already outside the
  // envelope widens it to where it is, so the case stays valid and the executor's clip still holds
  const socMin = Math.min(Math.max(e.socMin, e.reserveSoc), soc);
  const socMax = Math.max(e.socMax, soc);
  const pvW = forecastPv(i.pvSite, i.pvHistory, start, n);
  const tz = i.pvSite.timezone;
  const limits = caseLimits(i, start, n);
  return {
    // what each slot may see: the plan is made on its spread (policy.ts)
    spread: { loadW: loadSamples(tz, i.loadHistory, start, n) },
    case: {
      start: new Date(start).toISOString(),
      slotMinutes: SLOT_MS / 60_000,
      importPrice,
      exportPrice,
      pvW,
      // the median on days the grid fills the battery, the surplus the load's spread really leaves
      loadW: planLoad(tz, i.loadHistory, start, pvW),
      battery: {
        capacityWh: i.capacityWh,
        socInitial: soc,
        socMin,
        socMax,
        socFinalMin: Math.max(socMin, Math.min(soc, FINAL_SOC_CAP)),
        maxChargeW: e.maxChargeW,
        maxDischargeW: e.maxDischargeW,
        // no register the gateway reads tells the losses or the wear: site.yaml does (defaults 0.95, 0)
        chargeEfficiency: e.chargeEfficiency,
        dischargeEfficiency: e.dischargeEfficiency,
        cycleCostPerKWh: e.cycleCostPerKWh,
      },
      grid: { maxImportW: e.importLimitW, maxExportW: e.exportLimitW, gridCharge: e.gridCharge },
      ...(limits ? { limits } : {}),
    },
  };
}
