import type { Database } from 'better-sqlite3';
import { CHANNEL_GROUP, type ChannelId, type DeviceKind, type GridState, type IncludeGroup } from '../core/channels.js';
import { bucketColumns, type BucketColumn, type PartialBucket } from '../store/buckets.js';
import { findStreamKey } from '../store/streams.js';
import { BUCKET_MS, wholePeriods } from './align.js';
import { formatInterval } from './interval.js';
import { percentToFraction, round2 } from './round.js';

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
  socScale: 'percent' | 'fraction';
}

export interface TelemetryEntry {
  deviceKind: DeviceKind;
  /** the device kind again: the WS sample calls it `kind` (docs/design.md) */
  kind: DeviceKind;
  deviceId: string;
  interval: string;
  power_W?: number;
  power_AC_W?: number;
  power_DC_W?: number;
  soc?: number;
  soh?: number;
  energy_Wh_increment?: number;
  energy_Wh_decrement?: number;
  state?: GridState;
}

const COLUMN: Record<ChannelId, BucketColumn> = {
  power_W: 'power_W',
  power_AC_W: 'power_AC_W',
  power_DC_W: 'power_DC_W',
  soc: 'soc',
  soh: 'soh',
  energy_Wh_increment: 'energy_in',
  energy_Wh_decrement: 'energy_out',
  state: 'state',
};
const IS_POWER: Record<ChannelId, boolean> = {
  power_W: true,
  power_AC_W: true,
  power_DC_W: true,
  soc: false,
  soh: false,
  energy_Wh_increment: false,
  energy_Wh_decrement: false,
  state: false,
};

/**
 * The requested channels resolved to bucket columns once, so the row loops only index arrays.
 * Only those columns are read: a row is `[start_s, covered_ms (rollups only), ...names]`.
 */
interface Plan {
  names: ChannelId[];
  columns: BucketColumn[];
  /** row index of names[0] */
  first: number;
  /** index into names of soc when it must be scaled to a fraction, else -1 */
  fractionAt: number;
}

/** row index of covered_ms in a rollup's rows */
const COVERED = 1;

function plan(q: TelemetryQuery): Plan {
  const names = [...new Set(q.channels)].filter((c) => q.include.has(CHANNEL_GROUP[c]));
  const values = names.map((c) => COLUMN[c]);
  const rollup = q.resolution !== 'PT15M';
  return {
    names,
    columns: rollup ? ['covered_ms', ...values] : values,
    first: rollup ? 2 : 1,
    fractionAt: q.socScale === 'fraction' ? names.indexOf('soc') : -1,
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
  if (!(q.end > q.start)) return [];
  const key = findStreamKey(db, q.streamId);
  if (key === undefined) return [];
  const p = plan(q);
  if (p.names.length === 0) return [];
  const whole = wholePeriods(q.resolution, q.start, q.end, q.timezone);
  const rows = bucketColumns(db, key, whole.start / 1000, whole.end / 1000, p.columns);
  if (q.resolution === 'PT15M') return fromBuckets(rows, p, q);
  return rollup(rows, whole.bounds, p, q);
}

function fromBuckets(rows: PartialBucket[], p: Plan, q: TelemetryQuery): TelemetryEntry[] {
  const { names, first, fractionAt } = p;
  const n = names.length;
  const kind = q.deviceKind;
  const deviceId = q.deviceId;
  const out: TelemetryEntry[] = [];
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    const s = r[0] * 1000;
    const e: TelemetryEntry = { deviceKind: kind, kind, deviceId, interval: formatInterval(s, s + BUCKET_MS) };
    const w = e as unknown as Record<string, number | string>;
    let any = false;
    for (let j = 0; j < n; j++) {
      const v = r[first + j] as number | string | null;
      if (v === null) continue;
      w[names[j]!] = j === fractionAt ? percentToFraction(v as number) : v;
      any = true;
    }
    if (any) out.push(e);
  }
  return out;
}

/**
 * One routine for every coarser resolution: walks the rows and the period boundaries together.
 * `bounds` must cover the rows (bounds[0] <= first start, last bound > last start).
 */
function rollup(rows: PartialBucket[], bounds: number[], p: Plan, q: TelemetryQuery): TelemetryEntry[] {
  const { names, first, fractionAt } = p;
  const n = names.length;
  const power = names.map((c) => IS_POWER[c]);
  const kind = q.deviceKind;
  const deviceId = q.deviceId;
  const out: TelemetryEntry[] = [];

  // Per channel: weighted sum and weight for power, last value otherwise.
  const wsum = new Float64Array(n);
  const wcov = new Float64Array(n);
  const last: (number | string | null)[] = new Array(n).fill(null);
  let inPeriod = 0;
  let pi = 0;

  const flush = () => {
    const e: TelemetryEntry = { deviceKind: kind, kind, deviceId, interval: formatInterval(bounds[pi]!, bounds[pi + 1]!) };
    const w = e as unknown as Record<string, number | string>;
    let any = false;
    for (let j = 0; j < n; j++) {
      let v: number | string | null;
      if (power[j]) {
        v = wcov[j]! > 0 ? round2(wsum[j]! / wcov[j]!) : null;
        wsum[j] = 0;
        wcov[j] = 0;
      } else {
        v = last[j]!;
        last[j] = null;
      }
      if (v === null) continue;
      w[names[j]!] = j === fractionAt ? percentToFraction(v as number) : v;
      any = true;
    }
    if (any) out.push(e);
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
