/**
 * Savings per bucket (issue 7, docs/api.md "Savings entry"): what the house would have cost bought
 * entirely from the grid, minus what the grid connection actually cost.
 *
 *   savings = H * pImport - (I * pImport - E * pExport)
 *
 * per 15-minute bucket, with H the house consumption, I the grid import and E the grid export
 * in kWh. Energies come from the buckets' power means, W * 0.25 h: each bucket stands on its
 * own (counters would need the previous bucket, which is missing at every gap and at the start
 * of a query), and the grid meter's net mean makes I and E the quarter hour's net import or
 * export, the way a quarter-hour settlement counts them.
 *
 * A bucket without both power means is skipped as noData; one whose import price is missing,
 * or which exports and has no export price, as noPrice. Only closed buckets (ended by `now`)
 * count; the ones still to come are neither summed nor skipped.
 *
 * On a site with batteries each entry also says what the batteries as operated saved
 * (batterySavings, a sitegw addition; docs/tariffs.md "What the battery saved"): the grid cost the
 * same bucket would have had without them, the grid power less the batteries' (+ charging), minus
 * what it cost. It is the part of `savings` the batteries made, whoever ran them (their own
 * self-consumption, a partner's plan or the optimiser).
 */
import type { Database } from 'better-sqlite3';
import { streamIds } from '../core/streams.js';
import type { Site } from '../site/site.js';
import { bucketColumns } from '../store/buckets.js';
import { findStreamKey } from '../store/streams.js';
import { BUCKET_MS, wholePeriods } from '../telemetry/align.js';
import { formatInterval, type TimeRange } from '../telemetry/interval.js';
import { type PriceLookup, sitePrices } from './site-prices.js';

export const SAVINGS_RESOLUTIONS = ['PT15M', 'PT1H', 'P1D', 'P1M'] as const;
export type SavingsResolution = (typeof SAVINGS_RESOLUTIONS)[number];

const BUCKET_H = BUCKET_MS / 3_600_000;

export interface SavingsEntry {
  interval: string;
  savings: number;
  /** the batteries' part of savings; only on a site with batteries */
  batterySavings?: number;
}

export interface Skipped {
  noData: number;
  noPrice: number;
  /** counted buckets whose battery part is left out; only on a site with batteries */
  batteryNotCounted?: number;
}

/** Mean power (W) per bucket start (ms). */
export type PowerSeries = ReadonlyMap<number, number>;

export interface SavingsInput {
  range: TimeRange;
  /** period boundaries covering range (telemetry/align periodBoundaries) */
  bounds: readonly number[];
  /** buckets ending after this (ms) are not closed yet */
  now: number;
  /** house consumption, W (>= 0) */
  house: PowerSeries;
  /** grid connection point, W: + import, - export (docs/design.md signs) */
  grid: PowerSeries;
  price: PriceLookup;
  /** the batteries together, W, + charging; absent on a site without batteries */
  battery?: PowerSeries;
}

/** Money is summed unrounded and each entry rounded once, to a hundredth of a cent. */
const roundMoney = (x: number) => Math.round(x * 10_000) / 10_000 + 0;

export function computeSavings(input: SavingsInput): { entries: SavingsEntry[]; skipped: Skipped } {
  const { range, bounds, now, house, grid, price, battery } = input;
  const skipped: Skipped = { noData: 0, noPrice: 0, ...(battery && { batteryNotCounted: 0 }) };
  const entries: SavingsEntry[] = [];
  let pi = 0;
  let sum = 0;
  let batterySum = 0;
  let counted = 0;
  const flush = () => {
    if (counted > 0)
      entries.push({
        interval: formatInterval(bounds[pi]!, bounds[pi + 1]!),
        savings: roundMoney(sum),
        ...(battery && { batterySavings: roundMoney(batterySum) }),
      });
    sum = 0;
    batterySum = 0;
    counted = 0;
  };
  for (let b = Math.ceil(range.start / BUCKET_MS) * BUCKET_MS; b < range.end && b + BUCKET_MS <= now; b += BUCKET_MS) {
    if (b >= bounds[pi + 1]!) {
      flush();
      while (b >= bounds[pi + 1]!) pi++;
    }
    const h = house.get(b);
    const g = grid.get(b);
    if (h === undefined || g === undefined) {
      skipped.noData++;
      continue;
    }
    const houseKWh = (h * BUCKET_H) / 1000;
    const gridKWh = (g * BUCKET_H) / 1000;
    const imported = Math.max(gridKWh, 0);
    const exported = Math.max(-gridKWh, 0);
    const p = price(b);
    if (p.importPrice === undefined || (exported > 0 && p.exportPrice === undefined)) {
      skipped.noPrice++;
      continue;
    }
    const without = houseKWh * p.importPrice;
    const withSystem = imported * p.importPrice - (exported > 0 ? exported * p.exportPrice! : 0);
    sum += without - withSystem;
    counted++;
    if (battery) {
      const bw = battery.get(b);
      // the same bucket with the batteries standing still: their power comes off the grid's
      const noBatteryKWh = bw === undefined ? 0 : ((g - bw) * BUCKET_H) / 1000;
      if (bw === undefined || (noBatteryKWh < 0 && p.exportPrice === undefined))
        skipped.batteryNotCounted = (skipped.batteryNotCounted ?? 0) + 1;
      else batterySum += gridCost(noBatteryKWh, p.importPrice, p.exportPrice ?? 0) - withSystem;
    }
  }
  flush();
  return { entries, skipped };
}

/** What a quarter hour's net grid energy (kWh, + import) costs. */
const gridCost = (kWh: number, importPrice: number, exportPrice: number) =>
  kWh >= 0 ? kWh * importPrice : kWh * exportPrice;

/** The streams savings read: the grid connection point and the house (its meters, or the derived stream). */
export function savingsStreams(site: Site): { grid: string | undefined; house: string[]; battery: string[] } {
  const gridMeter = site.byRole('grid-meter')[0];
  const meters = site.byRole('consumption-meter').map((m) => streamIds.consumptionMeter(m.config.id));
  const derived = streamIds.consumptionDerived(site.id);
  return {
    grid: gridMeter ? streamIds.gridMeter(gridMeter.config.id) : undefined,
    house: meters.length > 0 ? meters : site.stream(derived) ? [derived] : [],
    battery: site
      .byRole('inverter')
      .map((i) => streamIds.batteryAggregate(i.config.id))
      .filter((id) => site.stream(id) !== undefined),
  };
}

/** power_W per bucket of the streams, summed; a bucket counts only where every stream has it. */
export function powerSeries(db: Database, streamIdsToSum: readonly string[], range: TimeRange): Map<number, number> {
  const out = new Map<number, number>();
  const seen = new Map<number, number>();
  for (const id of streamIdsToSum) {
    const key = findStreamKey(db, id);
    if (key === undefined) return new Map();
    // power_W alone: every column handed to JavaScript costs time, and a year has 35,040 rows
    for (const [startS, w] of bucketColumns(db, key, Math.ceil(range.start / 1000), Math.ceil(range.end / 1000), [
      'power_W',
    ])) {
      if (w === null) continue;
      const b = startS * 1000;
      out.set(b, (out.get(b) ?? 0) + (w as number));
      seen.set(b, (seen.get(b) ?? 0) + 1);
    }
  }
  for (const [b, n] of seen) if (n < streamIdsToSum.length) out.delete(b);
  return out;
}

export interface SavingsQuery {
  range: TimeRange;
  resolution: SavingsResolution;
  /** the daemon clock, ms */
  now: number;
  /** streams the caller may read; one it may not is treated as having no data */
  sees?: (streamId: string) => boolean;
}

export interface SavingsResult {
  currency: string;
  entries: SavingsEntry[];
  skipped: Skipped;
}

/** Savings of the site for GET /api/v2/sites/{siteId}/savings. */
export function siteSavings(db: Database, site: Site, q: SavingsQuery): SavingsResult {
  // whole periods, as telemetry (docs/design.md "partial periods"): an entry's interval is a stable key
  const { bounds, ...range } = wholePeriods(q.resolution, q.range.start, q.range.end, site.config.site.timezone);
  const price = sitePrices(db, site.config, range);
  const { grid, house, battery } = savingsStreams(site);
  const visible = (ids: string[]) => (q.sees === undefined || ids.every(q.sees) ? ids : []);
  const { entries, skipped } = computeSavings({
    range,
    bounds,
    now: q.now,
    house: powerSeries(db, visible(house), range),
    grid: powerSeries(db, visible(grid ? [grid] : []), range),
    price,
    // a caller that may not see the batteries gets the answer of a site without them
    ...(battery.length > 0 && visible(battery).length > 0 && { battery: powerSeries(db, battery, range) }),
  });
  return { currency: site.config.site.currency, entries, skipped };
}
