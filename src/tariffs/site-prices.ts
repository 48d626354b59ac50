/**
 * The prices of each quarter hour under the site's tariff (site.yaml `tariff:`): flat, time of
 * use in the site's local time, or a dynamic tariff stored on the gateway.
 */
import type { Database } from 'better-sqlite3';
import { IANAZone } from 'luxon';
import { SLOTS_PER_DAY, weekTable } from '../config/tou.js';
import type { SiteConfig, SiteTariff } from '../config/types.js';
import { apiError } from '../core/errors.js';
import { findTariff, valuesOverlapping } from '../store/tariffs.js';
import { BUCKET_MS, floorToBucket } from '../telemetry/align.js';
import type { TimeRange } from '../telemetry/interval.js';
import { MAX_VALUE_MS } from './body.js';

const DAY_MS = 86_400_000;

/** Per kWh in the site's currency; a price the tariff does not have for that quarter hour is absent. */
export interface BucketPrice {
  importPrice?: number;
  exportPrice?: number;
}

/** The prices of the quarter hour starting at `bucketStart` (ms). */
export type PriceLookup = (bucketStart: number) => BucketPrice;

const NONE: BucketPrice = {};

const unavailable = (why: string) =>
  apiError('SITE_TARIFF_UNAVAILABLE', `${why}; savings are priced with the site's tariff (docs/tariffs.md)`);

/** Prices for the buckets of `range`; 409 SITE_TARIFF_UNAVAILABLE when the site has no usable tariff. */
export function sitePrices(db: Database, config: SiteConfig, range: TimeRange): PriceLookup {
  const tariff: SiteTariff | undefined = config.tariff;
  if (!tariff) throw unavailable('site.yaml has no tariff section');
  switch (tariff.type) {
    case 'flat': {
      const p = { importPrice: tariff.importPrice, exportPrice: tariff.exportPrice };
      return () => p;
    }
    case 'time-of-use':
      return touPrices(tariff.periods, config.site.timezone, range);
    case 'dynamic':
      return dynamicPrices(db, tariff.tariffId, config.site.currency, range);
  }
}

/**
 * The zone's UTC offset for bucket starts in [start, end) as spans of constant offset. Asking
 * luxon per bucket costs ~12 us each (0.4 s for a year); a probe per day and a binary search
 * around each change costs a few hundred asks. Zones change offset at most once a day, on a
 * quarter hour.
 */
function offsetSpans(zone: IANAZone, start: number, end: number): { from: number; offsetMs: number }[] {
  const ask = (ms: number) => zone.offset(ms) * 60_000;
  let t = floorToBucket(start);
  const last = Math.ceil(end / BUCKET_MS) * BUCKET_MS;
  let off = ask(t);
  const spans = [{ from: t, offsetMs: off }];
  while (t < last) {
    const next = Math.min(t + DAY_MS, last);
    const o = ask(next);
    if (o !== off) {
      let lo = t;
      let hi = next;
      while (hi - lo > BUCKET_MS) {
        const mid = floorToBucket((lo + hi) / 2);
        if (ask(mid) === off) lo = mid;
        else hi = mid;
      }
      spans.push({ from: hi, offsetMs: o });
      off = o;
    }
    t = next;
  }
  return spans;
}

function touPrices(
  periods: Extract<SiteTariff, { type: 'time-of-use' }>['periods'],
  timezone: string,
  range: TimeRange,
): PriceLookup {
  const { slots } = weekTable(periods);
  const spans = offsetSpans(IANAZone.create(timezone), range.start, range.end);
  let k = 0;
  return (b) => {
    // buckets are asked in ascending order: the span pointer only moves forward
    if (b < spans[k]!.from) k = 0;
    while (k + 1 < spans.length && spans[k + 1]!.from <= b) k++;
    const local = b + spans[k]!.offsetMs;
    const day = Math.floor(local / DAY_MS);
    // 1970-01-01 was a Thursday, day 3 of a Monday-first week
    const weekday = (((day + 3) % 7) + 7) % 7;
    const i = slots[weekday * SLOTS_PER_DAY + Math.floor((local - day * DAY_MS) / BUCKET_MS)]!;
    return i < 0 ? NONE : { importPrice: periods[i]!.importPrice, exportPrice: periods[i]!.exportPrice };
  };
}

function dynamicPrices(db: Database, tariffId: string, currency: string, range: TimeRange): PriceLookup {
  const t = findTariff(db, tariffId);
  if (!t)
    throw unavailable(
      `the site's dynamic tariff '${tariffId}' (site.yaml tariff.tariffId) is not stored on this gateway`,
    );
  if (t.currency !== currency)
    throw unavailable(`the site's dynamic tariff '${tariffId}' is in ${t.currency}, the site in ${currency}`);
  const byBucket = new Map<number, BucketPrice>();
  for (const v of valuesOverlapping(db, tariffId, range.start, range.end, MAX_VALUE_MS)) {
    const p: BucketPrice = {
      ...(v.importPrice !== undefined ? { importPrice: v.importPrice } : {}),
      ...(v.exportPrice !== undefined ? { exportPrice: v.exportPrice } : {}),
    };
    for (let b = v.start; b < v.end; b += BUCKET_MS) byBucket.set(b, p);
  }
  return (b) => byBucket.get(b) ?? NONE;
}
