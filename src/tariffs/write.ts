import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { TariffQuota } from '../config/types.js';
import { apiError } from '../core/errors.js';
import { writeTx } from '../store/db.js';
import {
  countValues,
  findTariff,
  insertTariff,
  replaceValues,
  type TariffMeta,
  type TariffValue,
  valuesOverlapping,
} from '../store/tariffs.js';
import { formatInterval } from '../telemetry/interval.js';
import { type BodyValue, MAX_VALUE_MS, type NewTariff } from './body.js';
import { checkDailyQuota, checkTariffCount, checkValueCount, recordWrite } from './quota.js';

export interface WriteResult {
  inserted: number;
  replaced: number;
}

/** Who writes or reads a tariff: the client of the token, and whether it speaks for the site owner. */
export interface TariffCaller {
  clientId: string;
  /** a customer token (the owner's consent): sees and may change every tariff of the site */
  siteOwner: boolean;
}

/** What a write may store, and the real time (ms) its daily quota is counted in. */
export interface WriteLimits {
  quota: TariffQuota;
  nowMs: number;
}

/** A new tariff owned by the caller's client; refused whole when it passes a quota. */
export function createTariff(
  db: Database,
  t: NewTariff,
  caller: TariffCaller,
  limits: WriteLimits,
  createdAt: number,
): TariffMeta & WriteResult {
  const meta: TariffMeta = { id: randomUUID(), name: t.name, currency: t.currency, timezone: t.timezone, kind: t.kind };
  writeTx(db, () => {
    checkTariffCount(db, limits.quota, caller.clientId);
    checkValueCount(limits.quota, t.values.length);
    checkDailyQuota(db, limits.quota, caller.clientId, t.values.length, limits.nowMs);
    insertTariff(db, meta, caller.clientId, createdAt);
    replaceValues(db, meta.id, [], t.values);
    recordWrite(db, caller.clientId, t.values.length, limits.nowMs);
  });
  return { ...meta, inserted: t.values.length, replaced: 0 };
}

/**
 * Adds values and replaces the stored ones they overlap. A stored value is replaced only when
 * the new values cover all of it, so a PATCH never leaves part of a priced interval without a
 * price: an hourly price may be replaced by four quarter-hour prices, not by one.
 */
export function patchTariff(
  db: Database,
  tariffId: string,
  values: readonly BodyValue[],
  caller: TariffCaller,
  limits: WriteLimits,
): WriteResult {
  if (values.length === 0) return { inserted: 0, replaced: 0 };
  return writeTx(db, () => {
    const from = values[0]!.start;
    const to = Math.max(...values.map((v) => v.end));
    const stored = valuesOverlapping(db, tariffId, from, to, MAX_VALUE_MS);
    const replaced: TariffValue[] = [];
    let j = 0; // first new value that may overlap the stored one (both lists ascending, neither overlapping itself)
    for (const s of stored) {
      while (j < values.length && values[j]!.end <= s.start) j++;
      let covered = s.start;
      let first: BodyValue | undefined;
      for (let k = j; k < values.length && values[k]!.start < s.end; k++) {
        const v = values[k]!;
        first ??= v;
        if (v.start <= covered) covered = Math.max(covered, v.end);
      }
      if (!first) continue;
      if (covered < s.end || first.start > s.start) {
        throw apiError(
          'OVERLAPPING_VALUES',
          `values[${first.index}] (${formatInterval(first.start, first.end)}) overlaps the stored value ${formatInterval(s.start, s.end)} ` +
            'without the request covering all of it; send values for the whole stored interval to replace it, or intervals that do not overlap it',
        );
      }
      replaced.push(s);
    }
    checkValueCount(limits.quota, countValues(db, tariffId) - replaced.length + values.length);
    checkDailyQuota(db, limits.quota, caller.clientId, values.length, limits.nowMs);
    replaceValues(db, tariffId, replaced, values);
    recordWrite(db, caller.clientId, values.length, limits.nowMs);
    return { inserted: values.length, replaced: replaced.length };
  });
}

/**
 * The tariff if the caller may see it: its own client's, or any for the site owner. Another
 * client's tariff answers exactly like a missing one, so its existence is not confirmed.
 */
export function requireTariff(db: Database, tariffId: string, caller: TariffCaller): TariffMeta {
  const t = findTariff(db, tariffId);
  if (!t || !(caller.siteOwner || t.owner === caller.clientId))
    throw apiError('TARIFF_NOT_FOUND', `tariff '${tariffId.slice(0, 100)}' does not exist on this gateway`);
  return t;
}
