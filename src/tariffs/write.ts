import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { apiError } from '../core/errors.js';
import { findTariff, insertTariff, replaceValues, valuesOverlapping, type TariffMeta, type TariffValue } from '../store/tariffs.js';
import { formatInterval } from '../telemetry/interval.js';
import { MAX_VALUE_MS, type BodyValue, type NewTariff } from './body.js';

export interface WriteResult {
  inserted: number;
  replaced: number;
}

export function createTariff(db: Database, t: NewTariff, now: number): TariffMeta & WriteResult {
  const meta: TariffMeta = { id: randomUUID(), name: t.name, currency: t.currency, timezone: t.timezone, kind: t.kind };
  db.transaction(() => {
    insertTariff(db, meta, now);
    replaceValues(db, meta.id, [], t.values);
  })();
  return { ...meta, inserted: t.values.length, replaced: 0 };
}

/**
 * Adds values and replaces the stored ones they overlap. A stored value is replaced only when
 * the new values cover all of it, so a PATCH never leaves part of a priced interval without a
 * price: an hourly price may be replaced by four quarter-hour prices, not by one.
 */
export function patchTariff(db: Database, tariffId: string, values: readonly BodyValue[]): WriteResult {
  if (values.length === 0) return { inserted: 0, replaced: 0 };
  return db.transaction(() => {
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
    replaceValues(db, tariffId, replaced, values);
    return { inserted: values.length, replaced: replaced.length };
  })();
}

export function requireTariff(db: Database, tariffId: string): TariffMeta {
  const t = findTariff(db, tariffId);
  if (!t) throw apiError('TARIFF_NOT_FOUND', `tariff '${tariffId.slice(0, 100)}' does not exist on this gateway`);
  return t;
}
