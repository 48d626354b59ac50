import { Duration, Interval } from 'luxon';
import { INCLUDE_GROUPS, type IncludeGroup } from '../core/channels.js';
import { apiError } from '../core/errors.js';
import { fastUtcInterval } from './interval-fast.js';
import type { TimeRange } from './time-range.js';

export type { TimeRange } from './time-range.js';

export const MAX_INTERVAL_DAYS = 400;
const MAX_INTERVAL_MS = MAX_INTERVAL_DAYS * 86_400_000;

const FORMS =
  'interval must be an ISO 8601 interval in UTC: start/end, start/duration or duration/end, ' +
  'e.g. 2026-11-01T00:00:00Z/2026-11-02T00:00:00Z';

/** A datetime with a time part that ends in Z or ±hh[[:]mm]; a date alone has no zone either. */
const ZONED = /T[^/]*(?:Z|[+-]\d{2}(?::?\d{2})?)$/i;

const invalid = (text: string, why: string) => apiError('INVALID_INTERVAL', `interval "${text}" ${why}; ${FORMS}`);

/**
 * Parses the telemetry/savings `interval` parameter. Durations are applied in UTC, so
 * `start/P1D` is always 24 h whatever the server's zone.
 *
 * A bare duration (`PT6H`) is accepted only when `now` is given: it means the duration ending
 * at `now`, which lets a caller ask for "the last six hours" without a clock of its own.
 */
export function parseInterval(text: string, now?: number): TimeRange {
  const t = text.trim();
  if (t === '') throw apiError('INVALID_INTERVAL', `interval is empty; ${FORMS}`);
  const fast = fastUtcInterval(t);
  if (fast) return checked(text, fast);
  const parts = t.split('/');

  if (parts.length === 1 && /^P/.test(t) && now !== undefined) {
    const d = Duration.fromISO(t);
    if (!d.isValid) throw invalid(text, `is not an ISO 8601 duration (${d.invalidExplanation ?? d.invalidReason})`);
    return checked(text, { start: now - d.toMillis(), end: now });
  }
  if (parts.length !== 2)
    throw invalid(text, parts.length === 1 ? 'has no "/" between start and end' : 'has more than one "/"');

  for (const [i, p] of parts.entries()) {
    if (/^P/i.test(p)) continue;
    // a five-digit or signed year, which luxon reads in some spellings and not in others
    if (/^(?:[+-]\d{4,}|\d{5,})-/.test(p)) throw outsideYears(text);
    if (!ZONED.test(p)) {
      const which = i === 0 ? 'start' : 'end';
      // An unencoded '+' in a query string arrives as a space: say so rather than "no offset".
      if (/T\S* \d{2}(:?\d{2})?$/.test(p)) {
        throw invalid(text, `has a space where the ${which}'s UTC offset should be: encode "+" as %2B in the URL`);
      }
      throw invalid(
        text,
        `has no UTC offset on its ${which} "${p}": write Z or an offset such as +01:00 after the time`,
      );
    }
  }

  const iv = Interval.fromISO(t, { zone: 'utc' });
  if (!iv.isValid) {
    if (iv.invalidReason === 'end before start')
      throw invalid(text, 'ends before it starts: the end must be after the start');
    throw invalid(text, 'cannot be parsed');
  }
  return checked(text, { start: iv.start!.toMillis(), end: iv.end!.toMillis() });
}

/**
 * The instants an interval may hold: years 0000 to 9999, what ISO 8601's four-digit year writes.
 * Beyond them only the expanded form (+010000-…) could answer, which clients do not expect.
 */
export const FIRST_INSTANT = '0000-01-01T00:00:00Z';
export const LAST_INSTANT = '9999-12-31T23:59:59Z';
const FIRST_MS = Date.parse(FIRST_INSTANT);
const LAST_MS = Date.parse(LAST_INSTANT);

const outsideYears = (text: string) =>
  invalid(
    text,
    `reaches outside the years 0000 to 9999: its start and end must lie from ${FIRST_INSTANT} to ${LAST_INSTANT}`,
  );

function checked(text: string, r: TimeRange): TimeRange {
  if (!(r.end > r.start)) throw invalid(text, 'ends before or at its start: the end must be after the start');
  if (r.start < FIRST_MS || r.end > LAST_MS) throw outsideYears(text);
  if (r.end - r.start > MAX_INTERVAL_MS) {
    const days = Math.ceil((r.end - r.start) / 86_400_000);
    throw apiError(
      'INTERVAL_TOO_LONG',
      `interval "${text}" spans ${days} days; at most ${MAX_INTERVAL_DAYS} days per request: split it into several requests`,
    );
  }
  return r;
}

/**
 * Calendar months and days stay apart from clock time: PT60M equals PT1H, but P1D is a local
 * day (23-25 h) and is not PT24H, and P1M is not P30D. Luxon's own Duration.equals compares unit
 * by unit (PT60M != PT1H) and toMillis() treats a month as 30 days, so neither fits.
 */
function durationKey(d: Duration): string | null {
  if (!d.isValid) return null;
  const o = d.toObject();
  const months = (o.years ?? 0) * 12 + (o.months ?? 0);
  const days = (o.weeks ?? 0) * 7 + (o.days ?? 0);
  const ms = (o.hours ?? 0) * 3_600_000 + (o.minutes ?? 0) * 60_000 + (o.seconds ?? 0) * 1000 + (o.milliseconds ?? 0);
  return `${months}/${days}/${ms}`;
}

/**
 * The `resolution` parameter: one of `allowed`, or `fallback` when absent. An equivalent
 * spelling (PT60M for PT1H) is accepted and returned as the allowed spelling; see durationKey.
 */
export function parseResolution<R extends string>(text: string | undefined, allowed: readonly R[], fallback: R): R {
  if (text === undefined || text.trim() === '') return fallback;
  const t = text.trim();
  const exact = allowed.find((a) => a === t);
  if (exact !== undefined) return exact;
  const key = durationKey(Duration.fromISO(t));
  if (key !== null) {
    const same = allowed.find((a) => durationKey(Duration.fromISO(a)) === key);
    if (same !== undefined) return same;
  }
  throw apiError('INVALID_RESOLUTION', `resolution "${text}" is not supported; allowed: ${allowed.join(', ')}`);
}

/** The `include` parameter: comma-separated groups, `default` when absent or empty. */
export function parseInclude(text: string | undefined): Set<IncludeGroup> {
  const out = new Set<IncludeGroup>();
  if (text === undefined) return new Set(['default']);
  // a parameter that is present but names nothing is a client bug worth reporting, not a default
  if (text.trim() === '')
    throw apiError('INVALID_INCLUDE', `include is empty; allowed: ${INCLUDE_GROUPS.join(', ')} (comma-separated)`);
  for (const raw of text.split(',')) {
    const g = raw.trim();
    if (g === '') continue;
    if (!(INCLUDE_GROUPS as readonly string[]).includes(g)) {
      throw apiError(
        'INVALID_INCLUDE',
        `include "${g}" is not a field group; allowed: ${INCLUDE_GROUPS.join(', ')} (comma-separated)`,
      );
    }
    out.add(g as IncludeGroup);
  }
  if (out.size === 0)
    throw apiError(
      'INVALID_INCLUDE',
      `include names no group; allowed: ${INCLUDE_GROUPS.join(', ')} (comma-separated)`,
    );
  return out;
}

const DAY_MS = 86_400_000;
const PAD2 = Array.from({ length: 60 }, (_, i) => (i < 10 ? `0${i}` : `${i}`));
const QUARTER_MS = 900_000;
/** `hh:mm:00Z` of the day's quarter hours, by index; a fraction indexes nothing */
const QUARTER_TIMES: readonly string[] = Array.from(
  { length: 96 },
  (_, k) => `${PAD2[k >> 2]}:${PAD2[(k & 3) * 15]}:00Z`,
);

// Buckets of a year share 366 dates: building the date part once per day keeps formatting a
// string concatenation. Two slots because start and end straddle midnight once a day.
let dayA = NaN;
let prefixA = '';
let dayB = NaN;
let prefixB = '';

function datePrefix(day: number): string {
  if (day === dayA) return prefixA;
  if (day === dayB) return prefixB;
  // up to the 'T': six digits and a sign for years outside 0000-9999 (ISO 8601 expanded form)
  const iso = new Date(day * DAY_MS).toISOString();
  const p = iso.slice(0, iso.indexOf('T') + 1);
  dayB = dayA;
  prefixB = prefixA;
  dayA = day;
  prefixA = p;
  return p;
}

/**
 * `2026-11-23T00:15:00Z`: canonical UTC, whole seconds (sub-second parts are dropped). Input
 * intervals stay in the years 0000-9999; a period widened past them (a day or month bucket at
 * the edge) is written in the expanded form `+010000-01-01T00:00:00Z`, never cut short.
 */
export function formatInstant(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  const inDay = ms - day * DAY_MS;
  // a bucket's bounds, nearly every instant written: the time is looked up (96 a day of PT15M)
  const quarter = QUARTER_TIMES[inDay / QUARTER_MS];
  if (quarter !== undefined) return datePrefix(day) + quarter;
  const s = Math.floor(inDay / 1000);
  const h = (s / 3600) | 0;
  const m = ((s % 3600) / 60) | 0;
  return `${datePrefix(day)}${PAD2[h]}:${PAD2[m]}:${PAD2[s % 60]}Z`;
}

/** `2026-11-23T00:15:00Z/2026-11-23T00:30:00Z` */
export function formatInterval(startMs: number, endMs: number): string {
  return `${formatInstant(startMs)}/${formatInstant(endMs)}`;
}

/** days whose quarter hours' texts are kept: a month's question, or a partner stepping back */
const KEPT_DAYS = 32;
const DAY_S = 86_400;
const QUARTER_S = 900;
/** by the day's first second */
const dayQuarters = new Map<number, readonly string[]>();
let lastDayS = Number.NaN;
let lastQuarters: readonly string[] = [];

/**
 * formatInterval of the quarter hour that starts at `startS` (seconds, as the buckets store
 * it). A day of PT15M writes 96 of them, and each day's are the same for every stream and
 * question: they are made once per UTC day and kept for the last KEPT_DAYS days made. In seconds,
 * a call on the day of the one before does only small-integer arithmetic: a millisecond time is
 * past V8's small integers, and under the unit's --lite-mode every step on it allocated a number
 * (bench/README.md "A day not asked before").
 */
export function quarterInterval(startS: number): string {
  if (!(startS - lastDayS >= 0 && startS - lastDayS < DAY_S)) {
    const dayS = Math.floor(startS / DAY_S) * DAY_S;
    let q = dayQuarters.get(dayS);
    if (q === undefined) {
      const from = dayS * 1000;
      q = QUARTER_TIMES.map((_, k) => formatInterval(from + k * QUARTER_MS, from + (k + 1) * QUARTER_MS));
      dayQuarters.set(dayS, q);
      for (const d of dayQuarters.keys()) {
        if (dayQuarters.size <= KEPT_DAYS) break;
        dayQuarters.delete(d);
      }
    }
    lastDayS = dayS;
    lastQuarters = q;
  }
  // a start off the quarter-hour grid indexes nothing
  return lastQuarters[(startS - lastDayS) / QUARTER_S] ?? formatInterval(startS * 1000, (startS + QUARTER_S) * 1000);
}
