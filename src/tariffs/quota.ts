/**
 * What one API client may store of dynamic tariffs (site.yaml limits.dynamicTariffs,
 * docs/security.md "Tariff ownership and quotas"). Every write lands on the Pi's SD card, so a
 * client's tariffs, each tariff's values and the values a client stores per 24 hours are
 * bounded. The checks run inside the write's transaction: a refused write stores nothing.
 */
import type { Database } from 'better-sqlite3';
import type { TariffQuota } from '../config/types.js';
import { apiError } from '../core/errors.js';
import { countTariffsOwnedBy, recordTariffWrite, tariffWritesSince } from '../store/tariffs.js';

const DAY_MS = 86_400_000;
const SETTING = 'limits.dynamicTariffs';

export function checkTariffCount(db: Database, quota: TariffQuota, clientId: string): void {
  const owned = countTariffsOwnedBy(db, clientId);
  if (owned >= quota.maxPerClient) {
    throw apiError(
      'TARIFF_LIMIT_REACHED',
      `this client owns ${owned} dynamic tariffs, the most ${SETTING}.maxPerClient allows; keep its prices in the tariffs it has (PATCH replaces values)`,
    );
  }
}

/** `after`: the values the tariff would hold once the write is stored. */
export function checkValueCount(quota: TariffQuota, after: number): void {
  if (after > quota.maxValuesPerTariff) {
    throw apiError(
      'TARIFF_LIMIT_REACHED',
      `the tariff would hold ${after} values, more than ${SETTING}.maxValuesPerTariff (${quota.maxValuesPerTariff}) allows`,
    );
  }
}

/**
 * Refuses a write of `adding` values that would take the client past its values per 24 hours,
 * with Retry-After: when enough of its earlier writes have left the window. Real time, not the
 * demo's fast site clock: it is the SD card's wear that the quota paces.
 */
export function checkDailyQuota(
  db: Database,
  quota: TariffQuota,
  clientId: string,
  adding: number,
  nowMs: number,
): void {
  const max = quota.maxValuesPerClientPerDay;
  if (adding > max) {
    throw apiError(
      'TARIFF_LIMIT_REACHED',
      `the request stores ${adding} values, more than ${SETTING}.maxValuesPerClientPerDay (${max}) allows a client in 24 hours; send fewer per request`,
    );
  }
  const writes = tariffWritesSince(db, clientId, nowMs - DAY_MS);
  let used = writes.reduce((sum, w) => sum + w.count, 0);
  if (used + adding <= max) return;
  const total = used;
  let freeAt = nowMs;
  for (const w of writes) {
    used -= w.count;
    freeAt = w.atMs + DAY_MS;
    if (used + adding <= max) break;
  }
  const retryAfter = Math.max(1, Math.ceil((freeAt - nowMs) / 1000));
  throw apiError(
    'TARIFF_QUOTA_EXCEEDED',
    `this client stored ${total} tariff values in the last 24 hours; ${adding} more would pass ${SETTING}.maxValuesPerClientPerDay (${max}); retry in ${retryAfter} s`,
    retryAfter,
  );
}

export function recordWrite(db: Database, clientId: string, count: number, nowMs: number): void {
  if (count > 0) recordTariffWrite(db, clientId, nowMs, count);
}
