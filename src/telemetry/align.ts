import { DateTime, IANAZone } from 'luxon';

/**
 * Period boundaries. PT15M and PT1H align on UTC; P1D and P1M on the site's local midnight
 * (docs/design.md), so a local day is 23 or 25 h on DST change days.
 */
export const BUCKET_MS = 15 * 60_000;
export const HOUR_MS = 3_600_000;

/** Floor to a multiple of `stepMs` since the epoch (UTC boundaries for steps dividing a day). */
export function floorUtc(ms: number, stepMs: number): number {
  return Math.floor(ms / stepMs) * stepMs;
}

export const floorToBucket = (ms: number): number => floorUtc(ms, BUCKET_MS);
export const floorToHour = (ms: number): number => floorUtc(ms, HOUR_MS);

function zoneOf(timezone: string): IANAZone {
  const z = IANAZone.create(timezone);
  if (!z.isValid) throw new RangeError(`unknown IANA time zone "${timezone}"`);
  return z;
}

/** Start of the local day containing `ms` in `timezone`. */
export function localDayStart(ms: number, timezone: string): number {
  return DateTime.fromMillis(ms, { zone: zoneOf(timezone) })
    .startOf('day')
    .toMillis();
}

/** Start of the local calendar month containing `ms` in `timezone`. */
export function localMonthStart(ms: number, timezone: string): number {
  return DateTime.fromMillis(ms, { zone: zoneOf(timezone) })
    .startOf('month')
    .toMillis();
}

/**
 * Boundaries b0 <= start < b1 < ... < bn >= end of the periods overlapping [start, end):
 * period i is [b[i], b[i+1]). Requires start < end.
 */
export function utcBoundaries(start: number, end: number, stepMs: number): number[] {
  const out: number[] = [];
  let b = floorUtc(start, stepMs);
  out.push(b);
  while (b < end) out.push((b += stepMs));
  return out;
}

export function localDayBoundaries(start: number, end: number, timezone: string): number[] {
  return localBoundaries(start, end, timezone, 'day');
}

export function localMonthBoundaries(start: number, end: number, timezone: string): number[] {
  return localBoundaries(start, end, timezone, 'month');
}

function localBoundaries(start: number, end: number, timezone: string, unit: 'day' | 'month'): number[] {
  const zone = zoneOf(timezone);
  let dt = DateTime.fromMillis(start, { zone }).startOf(unit);
  const out = [dt.toMillis()];
  while (out[out.length - 1]! < end) {
    // plus() on the local calendar, then startOf() again: a zone whose DST change happens at
    // midnight has no 00:00 on that day, and startOf() lands on its first valid instant.
    dt = dt.plus(unit === 'day' ? { days: 1 } : { months: 1 }).startOf(unit);
    out.push(dt.toMillis());
  }
  return out;
}

export type PeriodResolution = 'PT15M' | 'PT1H' | 'P1D' | 'P1M';

/** Boundaries of the `resolution` periods overlapping [start, end), see utcBoundaries. */
export function periodBoundaries(resolution: PeriodResolution, start: number, end: number, timezone: string): number[] {
  switch (resolution) {
    case 'PT15M':
      return utcBoundaries(start, end, BUCKET_MS);
    case 'PT1H':
      return utcBoundaries(start, end, HOUR_MS);
    case 'P1D':
      return localDayBoundaries(start, end, timezone);
    case 'P1M':
      return localMonthBoundaries(start, end, timezone);
  }
}

/**
 * [start, end) widened to whole `resolution` periods (docs/design.md "partial periods"): an entry
 * always stands for its whole period, so `deviceId` + `interval` is a stable key for a client
 * that stores entries. Returns the period boundaries too, since every caller walks them.
 */
export function wholePeriods(
  resolution: PeriodResolution,
  start: number,
  end: number,
  timezone: string,
): { start: number; end: number; bounds: number[] } {
  const bounds = periodBoundaries(resolution, start, end, timezone);
  return { start: bounds[0]!, end: bounds[bounds.length - 1]!, bounds };
}
