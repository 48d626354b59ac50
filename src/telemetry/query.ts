import type { Database } from 'better-sqlite3';
import {
  CHANNEL_BY_ID,
  type ChannelId,
  type DeviceKind,
  INCLUDE_GROUPS,
  type IncludeGroup,
  type SocScale,
} from '../core/channels.js';
import { type BucketColumn, bucketColumns, type PartialBucket } from '../store/buckets.js';
import { hourColumns, rolledUntil } from '../store/retention.js';
import { findStreamKey } from '../store/streams.js';
import { BUCKET_MS, floorUtc, HOUR_MS, wholePeriods } from './align.js';
import { type EntryShape, entryHead, entryShape, type TelemetryEntry, toEntry, valuesText } from './entry.js';
import { formatInterval, quarterInterval } from './interval.js';
import { round2 } from './round.js';

export const TELEMETRY_RESOLUTIONS = ['PT15M', 'PT1H', 'P1D'] as const;
export type TelemetryResolution = (typeof TELEMETRY_RESOLUTIONS)[number];

export interface TelemetryQuery {
  streamId: string;
  /** written into every entry's `deviceId` */
  deviceId: string;
  deviceKind: DeviceKind;
  /** ms, inclusive */
  start: number;
  /** ms, exclusive */
  end: number;
  resolution: TelemetryResolution;
  include: ReadonlySet<IncludeGroup>;
  /** the stream's channels; those outside `include` are left out */
  channels: readonly ChannelId[];
  /** IANA zone whose local midnight bounds P1D periods */
  timezone: string;
  socScale: SocScale;
}

/**
 * The requested channels resolved to bucket columns once, so the row loops only index arrays.
 * Only those columns are read: a row is `[start_s, covered_ms (rollups only), ...names]`.
 */
export interface Plan {
  shape: EntryShape;
  columns: BucketColumn[];
  /** row index of names[0] */
  first: number;
  /** per name: averaged over covered time (rollups), else the last value */
  mean: boolean[];
}

/** row index of covered_ms in a rollup's rows */
const COVERED = 1;

/**
 * Plans by the stream's channel list (the site's, fixed for the process), then by what else they
 * depend on: a request's own plan was a Set, a filter and two maps of the same few channels, each
 * request under the unit's --lite-mode (bench/README.md "A day not asked before"). A caller that
 * makes its channel list anew each time only misses.
 */
const plans = new WeakMap<readonly ChannelId[], Map<number, Plan>>();

function planOf(q: TelemetryQuery): Plan {
  let byAsk = plans.get(q.channels);
  if (!byAsk) plans.set(q.channels, (byAsk = new Map()));
  let groups = 0;
  for (let g = 0; g < INCLUDE_GROUPS.length; g++) if (q.include.has(INCLUDE_GROUPS[g]!)) groups |= 1 << g;
  const key =
    (groups * TELEMETRY_RESOLUTIONS.length + TELEMETRY_RESOLUTIONS.indexOf(q.resolution)) * 2 +
    (q.socScale === 'fraction' ? 1 : 0);
  let plan = byAsk.get(key);
  if (!plan) byAsk.set(key, (plan = makePlan(q)));
  return plan;
}

function makePlan(q: TelemetryQuery): Plan {
  const shape = entryShape(q.channels, q.include, q.socScale);
  const values = shape.names.map((c) => CHANNEL_BY_ID[c].column);
  const rollup = q.resolution !== 'PT15M';
  return {
    shape,
    columns: rollup ? ['covered_ms', ...values] : values,
    first: rollup ? 2 : 1,
    // 'last' and 'end' both take the period's last value: a counter's last value is its end
    mean: shape.names.map((c) => CHANNEL_BY_ID[c].rollup === 'mean'),
  };
}

/**
 * Telemetry entries of one stream, ascending. [start, end) is first widened to whole periods
 * of the resolution (align.ts wholePeriods): every period it overlaps is listed with the values
 * of all its buckets, never a part of it labelled as the whole. A period whose buckets hold none
 * of the requested channels is left out rather than sent as an entry without values.
 *
 * PT15M hands out the stored rows; PT1H and P1D are rolled up in one pass: power is the mean
 * weighted by each bucket's covered time, soc/soh/state the last value, energy the value at
 * period end.
 */
export function queryTelemetry(db: Database, q: TelemetryQuery): TelemetryEntry[] {
  if (q.resolution === 'PT15M') {
    const r = resolveTelemetry(db, q);
    return r ? fromBuckets(quarterRows(db, q, r), r.plan, q) : [];
  }
  const pages = [...telemetryPages(db, q, Number.POSITIVE_INFINITY)];
  return pages.length === 1 ? pages[0]! : pages.flat();
}

/** A PT15M query's rows, in one read whatever its length: bounds counted on the UTC grid, not listed */
function quarterRows(db: Database, q: TelemetryQuery, r: Omit<PreparedTelemetry, 'bounds'>): PartialBucket[] {
  const fromMs = floorUtc(q.start, BUCKET_MS);
  const toMs = fromMs + telemetryPeriods(q) * BUCKET_MS;
  return bucketColumns(db, r.key, fromMs / 1000, toMs / 1000, r.plan.columns);
}

/**
 * `JSON.stringify({ entries: queryTelemetry(db, q) })`, byte for byte. PT15M is written from the
 * rows without entry objects (entry.ts valuesText): under the unit's flags a day not asked
 * before costs a fifth fewer instructions than the objects and their JSON (bench/README.md "A day
 * not asked before").
 */
export function telemetryJson(db: Database, q: TelemetryQuery): string {
  if (q.resolution !== 'PT15M') return JSON.stringify({ entries: queryTelemetry(db, q) });
  const r = resolveTelemetry(db, q);
  if (!r) return '{"entries":[]}';
  const { shape, first } = r.plan;
  const head = entryHead(q.deviceKind, q.deviceId);
  const rows = quarterRows(db, q, r);
  let out = '';
  // an index, not for…of: interpreted, each step of an array's iterator allocates its result
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const values = valuesText(shape, row, first);
    if (values === '') continue;
    const entry = `${head}${quarterInterval(row[0])}"${values}}`;
    out = out === '' ? entry : `${out},${entry}`;
  }
  return `{"entries":[${out}]}`;
}

/** How many periods of its resolution the query covers, once widened to whole ones. */
export function telemetryPeriods(q: TelemetryQuery): number {
  if (!(q.end > q.start)) return 0;
  // counted on the UTC grid, not listed: a month of PT15M is 2,880 bounds, made again by the query
  const step = q.resolution === 'PT15M' ? BUCKET_MS : q.resolution === 'PT1H' ? HOUR_MS : 0;
  if (step > 0) return Math.ceil((q.end - floorUtc(q.start, step)) / step);
  return wholePeriods(q.resolution, q.start, q.end, q.timezone).bounds.length - 1;
}

/**
 * The entries of queryTelemetry, `periods` periods at a time, each page read from the store only
 * when it is asked for: a large answer is then written as its client takes it, and what waits
 * for a client that does not read is one page, not the whole answer (docs/security.md).
 */
export function* telemetryPages(db: Database, q: TelemetryQuery, periods: number): Generator<TelemetryEntry[]> {
  const prep = prepareTelemetry(db, q);
  if (!prep) return;
  const all = prep.bounds;
  for (let i = 0; i < all.length - 1; i += periods) {
    const bounds = periods >= all.length ? all : all.slice(i, Math.min(i + periods, all.length - 1) + 1);
    yield entriesOver(db, prep, q, bounds);
  }
}

/** A query resolved against the store: its stream's row key, column plan and period bounds. */
export interface PreparedTelemetry {
  key: number;
  plan: Plan;
  /** every period's start, then the last one's end (ms) */
  bounds: number[];
}

/** undefined when the query can have no entries (empty range, no such stream, no asked channel) */
export function prepareTelemetry(db: Database, q: TelemetryQuery): PreparedTelemetry | undefined {
  const r = resolveTelemetry(db, q);
  return r && { ...r, bounds: wholePeriods(q.resolution, q.start, q.end, q.timezone).bounds };
}

/** prepareTelemetry without the period bounds (a month of PT15M is 2,880 of them, each request) */
export function resolveTelemetry(db: Database, q: TelemetryQuery): Omit<PreparedTelemetry, 'bounds'> | undefined {
  if (!(q.end > q.start)) return undefined;
  const key = findStreamKey(db, q.streamId);
  if (key === undefined) return undefined;
  const plan = planOf(q);
  if (plan.shape.names.length === 0) return undefined;
  return { key, plan };
}

/** The entries of the periods `bounds` delimits (consecutive bounds of the prepared query). */
export function entriesOver(
  db: Database,
  prep: PreparedTelemetry,
  q: TelemetryQuery,
  bounds: number[],
): TelemetryEntry[] {
  const fromS = bounds[0]! / 1000;
  const toS = bounds[bounds.length - 1]! / 1000;
  const p = prep.plan;
  if (q.resolution === 'PT15M') return fromBuckets(bucketColumns(db, prep.key, fromS, toS, p.columns), p, q);
  return rollup(rollupRows(db, prep.key, fromS, toS, p.columns), bounds, p, q);
}

/**
 * The entries of the periods `bounds` delimits, the rows read once and the entries split into
 * segments: segment k holds the periods from bounds[cuts[k]] to bounds[cuts[k + 1]], with each
 * entry's period start (ms).
 */
export function entriesSplit(
  db: Database,
  prep: PreparedTelemetry,
  q: TelemetryQuery,
  bounds: number[],
  cuts: readonly number[],
): { entries: TelemetryEntry[]; starts: number[] }[] {
  const fromS = bounds[0]! / 1000;
  const toS = bounds[bounds.length - 1]! / 1000;
  const p = prep.plan;
  const pt15 = q.resolution === 'PT15M';
  const rows = pt15
    ? bucketColumns(db, prep.key, fromS, toS, p.columns)
    : rollupRows(db, prep.key, fromS, toS, p.columns);
  const out: { entries: TelemetryEntry[]; starts: number[] }[] = [];
  let r = 0;
  for (let k = 0; k + 1 < cuts.length; k++) {
    const endS = bounds[cuts[k + 1]!]! / 1000;
    const first = r;
    while (r < rows.length && rows[r]![0] < endS) r++;
    const seg = rows.slice(first, r);
    const starts: number[] = [];
    const entries = pt15
      ? fromBuckets(seg, p, q, starts)
      : rollup(seg, bounds.slice(cuts[k]!, cuts[k + 1]! + 1), p, q, starts);
    out.push({ entries, starts });
  }
  return out;
}

/**
 * The rows a rollup reads: the PT15M buckets, and where retention rolled old ones up
 * (src/telemetry/retention.ts) the hour rows, merged by start; an hour row weighs as its
 * covered time, as its buckets did.
 */
function rollupRows(db: Database, key: number, fromS: number, toS: number, columns: BucketColumn[]): PartialBucket[] {
  const buckets = bucketColumns(db, key, fromS, toS, columns);
  const rolled = rolledUntil(db);
  if (fromS >= rolled) return buckets;
  const hours = hourColumns(db, key, fromS, Math.min(toS, rolled), columns);
  if (hours.length === 0) return buckets;
  if (buckets.length === 0) return hours;
  const out: PartialBucket[] = [];
  let i = 0;
  let j = 0;
  while (i < hours.length || j < buckets.length) {
    if (j >= buckets.length || (i < hours.length && hours[i]![0] <= buckets[j]![0])) out.push(hours[i++]!);
    else out.push(buckets[j++]!);
  }
  return out;
}

/** `starts`, when given, gets each entry's period start (ms) */
function fromBuckets(rows: PartialBucket[], p: Plan, q: TelemetryQuery, starts?: number[]): TelemetryEntry[] {
  const { shape, first } = p;
  const kind = q.deviceKind;
  const deviceId = q.deviceId;
  const out: TelemetryEntry[] = [];
  for (const r of rows) {
    const e = toEntry(kind, deviceId, quarterInterval(r[0]), shape, r, first);
    if (e) {
      out.push(e);
      starts?.push(r[0] * 1000);
    }
  }
  return out;
}

/**
 * One routine for every coarser resolution: walks the rows and the period boundaries together.
 * `bounds` must cover the rows (bounds[0] <= first start, last bound > last start).
 */
function rollup(
  rows: PartialBucket[],
  bounds: number[],
  p: Plan,
  q: TelemetryQuery,
  starts?: number[],
): TelemetryEntry[] {
  const { shape, first } = p;
  const n = shape.names.length;
  const power = p.mean;
  const kind = q.deviceKind;
  const deviceId = q.deviceId;
  const out: TelemetryEntry[] = [];

  // Per channel: weighted sum and weight for power, last value otherwise.
  const wsum = new Float64Array(n);
  const wcov = new Float64Array(n);
  const last: (number | string | null)[] = new Array(n).fill(null);
  // one period's values, in names order, for toEntry
  const values: (number | string | null)[] = new Array(n).fill(null);
  let inPeriod = 0;
  let pi = 0;

  const flush = () => {
    for (let j = 0; j < n; j++) {
      if (power[j]) {
        values[j] = wcov[j]! > 0 ? round2(wsum[j]! / wcov[j]!) : null;
        wsum[j] = 0;
        wcov[j] = 0;
      } else {
        values[j] = last[j]!;
        last[j] = null;
      }
    }
    const e = toEntry(kind, deviceId, formatInterval(bounds[pi]!, bounds[pi + 1]!), shape, values);
    if (e) {
      out.push(e);
      starts?.push(bounds[pi]!);
    }
    inPeriod = 0;
  };

  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    const s = r[0] * 1000;
    if (s >= bounds[pi + 1]!) {
      if (inPeriod > 0) flush();
      do pi++;
      while (s >= bounds[pi + 1]!);
    }
    inPeriod++;
    const weight = r[COVERED] as number;
    for (let j = 0; j < n; j++) {
      const v = r[first + j] as number | string | null;
      if (v === null) continue;
      if (power[j]) {
        if (weight > 0) {
          wsum[j] = (wsum[j] ?? 0) + (v as number) * weight;
          wcov[j] = (wcov[j] ?? 0) + weight;
        }
      } else last[j] = v;
    }
  }
  if (inPeriod > 0) flush();
  return out;
}
