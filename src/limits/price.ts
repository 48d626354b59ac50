/**
 * The price source (docs/limits.md "Sources"): with `limits.negativeExportPrice: curtail` (the
 * default) and a site tariff, export 0 while the tariff's export price for the quarter hour is
 * below 0: every kWh exported then costs money.
 */
import type { Database } from 'better-sqlite3';
import type { SiteConfig } from '../config/types.js';
import { sitePrices } from '../tariffs/site-prices.js';
import { BUCKET_MS, floorToBucket } from '../telemetry/align.js';
import type { LimitSource } from './sources.js';

/** how long a quarter hour's price is kept before it is asked again (a dynamic tariff PATCHed meanwhile) */
const FRESH_MS = 10_000;

export function priceSource(db: Database, config: SiteConfig): LimitSource | null {
  if (config.limits.negativeExportPrice !== 'curtail' || !config.tariff) return null;
  let cache: { bucket: number; at: number; negative: boolean } | null = null;
  return {
    name: 'price',
    at(now) {
      const bucket = floorToBucket(now);
      if (!cache || cache.bucket !== bucket || Math.abs(now - cache.at) >= FRESH_MS) {
        let negative = cache?.bucket === bucket ? cache.negative : false;
        try {
          const p = sitePrices(db, config, { start: bucket, end: bucket + BUCKET_MS })(bucket);
          negative = p.exportPrice !== undefined && p.exportPrice < 0;
        } catch {
          // no usable price (a dynamic tariff without this quarter hour, a disk fault): no price limit
        }
        cache = { bucket, at: now, negative };
      }
      return cache.negative ? { exportW: 0 } : {};
    },
  };
}
