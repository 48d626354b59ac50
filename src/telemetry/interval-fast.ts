/**
 * The interval spellings clients send nearly always — canonical UTC instants (ISO 8601 / RFC 3339
 * `YYYY-MM-DDThh:mm:ssZ`, what this API writes in every entry) and a whole number of days, hours,
 * minutes or seconds — read without luxon, whose Interval.fromISO costs ~20 µs a request
 * (bench/telemetry-http.ts). Only what is unambiguous is answered here; everything else (offsets,
 * fractions, months, combined durations, out-of-range fields, an end before the start) gets
 * undefined and goes through luxon as before, errors included. test/telemetry/interval-fast.test.ts
 * holds every answer given here to luxon's.
 */
import type { TimeRange } from './time-range.js';

/** years 1000–9999 only: Date.UTC maps years 0–99 to 1900–1999 */
const UTC_INSTANT = /^([1-9]\d{3})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/;
/** one unit, at most four digits, so the result stays far inside the Date range */
const ONE_UNIT = /^P(?:(\d{1,4})D|T(\d{1,4})([HMS]))$/;
const UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000 };
const DAY_MS = 86_400_000;

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function utcInstant(s: string): number | undefined {
  const m = UTC_INSTANT.exec(s);
  if (!m) return undefined;
  const [y, mo, d, h, mi, sec] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || sec > 59) return undefined;
  return Date.UTC(y, mo - 1, d, h, mi, sec);
}

/** ms; in UTC a day is always 24 h, which is what luxon adds in zone utc too */
function oneUnit(s: string): number | undefined {
  const m = ONE_UNIT.exec(s);
  if (!m) return undefined;
  return m[1] !== undefined ? Number(m[1]) * DAY_MS : Number(m[2]) * UNIT_MS[m[3]!]!;
}

/** start/end, start/duration or duration/end in the common spelling, or undefined. */
export function fastUtcInterval(t: string): TimeRange | undefined {
  const slash = t.indexOf('/');
  if (slash < 0 || t.includes('/', slash + 1)) return undefined;
  const a = t.slice(0, slash);
  const b = t.slice(slash + 1);
  const start = utcInstant(a);
  if (start !== undefined) {
    let end = utcInstant(b);
    if (end === undefined) {
      const d = oneUnit(b);
      if (d !== undefined) end = start + d;
    }
    // luxon words an end before the start its own way: leave that answer to it
    return end === undefined || end < start ? undefined : { start, end };
  }
  const d = oneUnit(a);
  const end = d === undefined ? undefined : utcInstant(b);
  return end === undefined ? undefined : { start: end - d!, end };
}
