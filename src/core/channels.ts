/**
 * The channel table: every spec channel (docs/api.md "Channels") with what each part of the
 * gateway needs to know of it. Bucket columns, query plans, closed buckets, the telemetry schema
 * and the telemetry entries are all built from this one list, so a channel is added here once.
 * Signs follow docs/design.md: positive = energy flowing into the device.
 */

/** How a bucket, and a coarser period, sums a channel up (docs/design.md "bucket values"). */
export type Rollup = 'mean' | 'last' | 'end';

export interface ChannelSpec {
  id: string;
  /** the unit the topology declares */
  unit: string;
  /** the `include` group that asks for it (telemetry `include`, WS `telemetryInclude`) */
  group: 'default' | 'energy';
  /** its column in the `buckets` table */
  column: string;
  /** its field in a bucket row (store/buckets.ts BucketRow) */
  field: string;
  /** mean: time-weighted over the covered time; last: the last sample; end: the counter at period end */
  rollup: Rollup;
  /** `state`: a grid state string; every other channel is a number */
  value: 'number' | 'state';
  /** in words, for live views (Home Assistant sensor names: 'Battery' + 'state of charge') */
  label: string;
}

export const CHANNEL_TABLE = [
  {
    id: 'power_W',
    unit: 'W',
    group: 'default',
    rollup: 'mean',
    value: 'number',
    column: 'power_W',
    field: 'power_W',
    label: 'power',
  },
  {
    id: 'power_AC_W',
    unit: 'W',
    group: 'default',
    rollup: 'mean',
    value: 'number',
    column: 'power_AC_W',
    field: 'power_AC_W',
    label: 'AC power',
  },
  {
    id: 'power_DC_W',
    unit: 'W',
    group: 'default',
    rollup: 'mean',
    value: 'number',
    column: 'power_DC_W',
    field: 'power_DC_W',
    label: 'DC power',
  },
  {
    id: 'soc',
    unit: 'percent',
    group: 'default',
    rollup: 'last',
    value: 'number',
    column: 'soc',
    field: 'soc',
    label: 'state of charge',
  },
  {
    id: 'soh',
    unit: 'percent',
    group: 'default',
    rollup: 'last',
    value: 'number',
    column: 'soh',
    field: 'soh',
    label: 'state of health',
  },
  {
    id: 'energy_Wh_increment',
    unit: 'Wh',
    group: 'energy',
    rollup: 'end',
    value: 'number',
    column: 'energy_in',
    field: 'energyIn',
    label: 'energy in',
  },
  {
    id: 'energy_Wh_decrement',
    unit: 'Wh',
    group: 'energy',
    rollup: 'end',
    value: 'number',
    column: 'energy_out',
    field: 'energyOut',
    label: 'energy out',
  },
  {
    id: 'state',
    unit: 'None',
    group: 'default',
    rollup: 'last',
    value: 'state',
    column: 'state',
    field: 'state',
    label: 'grid',
  },
] as const satisfies readonly ChannelSpec[];

/**
 * The channel table's second part: live channels. What users of the inverter integrations
 * expect beside the spec's channels (grid frequency, per-phase values, DC string values,
 * temperatures, the operating status) where a device offers them. They are instantaneous, so
 * they are shown where "now" is asked for (the live view: /metrics, Home Assistant, the status
 * page) and never bucketed: a 15-minute mean of a frequency or a temperature hides what it is
 * watched for, and the spec's telemetry has no field for them (docs/design.md "Live channels").
 * A stream carries the ones its device reported (learned like PV modules, site/site.ts), from
 * the list its role allows (core/roles.ts `live`).
 */
export type LiveQuantityKind = 'frequency' | 'voltage' | 'current' | 'power' | 'temperature' | 'status';

export interface LiveChannelSpec {
  id: string;
  quantity: LiveQuantityKind;
  /** the unit its value is in */
  unit: string;
  /** the AC phase it measures, or the DC side */
  phase?: 'L1' | 'L2' | 'L3' | 'DC';
  /** in words, after the stream's label ('Grid' + 'frequency') */
  label: string;
  /** a value for diagnosing rather than watching: Home Assistant's entity starts disabled */
  diagnostic: boolean;
}

const phaseRows = <Q extends 'voltage' | 'current' | 'power', U extends string>(q: Q, unit: U) =>
  (['L1', 'L2', 'L3'] as const).map(
    (ph) =>
      ({ id: `${q}_${ph}_${unit}`, quantity: q, unit, phase: ph, label: `${q} ${ph}`, diagnostic: true }) as const,
  );

export const LIVE_CHANNEL_TABLE = [
  { id: 'frequency_Hz', quantity: 'frequency', unit: 'Hz', label: 'frequency', diagnostic: false },
  ...phaseRows('voltage', 'V'),
  ...phaseRows('current', 'A'),
  ...phaseRows('power', 'W'),
  { id: 'voltage_DC_V', quantity: 'voltage', unit: 'V', phase: 'DC', label: 'DC voltage', diagnostic: true },
  { id: 'current_DC_A', quantity: 'current', unit: 'A', phase: 'DC', label: 'DC current', diagnostic: true },
  { id: 'temperature_C', quantity: 'temperature', unit: 'Cel', label: 'temperature', diagnostic: false },
  { id: 'status', quantity: 'status', unit: 'None', label: 'status', diagnostic: false },
] as const satisfies readonly LiveChannelSpec[];

export type LiveChannelId = (typeof LIVE_CHANNEL_TABLE)[number]['id'];
export type NumericLiveChannel = Exclude<LiveChannelId, 'status'>;
export const LIVE_CHANNELS: readonly LiveChannelId[] = LIVE_CHANNEL_TABLE.map((c) => c.id);
export const NUMERIC_LIVE_CHANNELS = LIVE_CHANNELS.filter((c): c is NumericLiveChannel => c !== 'status');
export const LIVE_CHANNEL_BY_ID: Readonly<Record<LiveChannelId, LiveChannelSpec>> = Object.fromEntries(
  LIVE_CHANNEL_TABLE.map((c) => [c.id, c]),
) as Record<LiveChannelId, LiveChannelSpec>;
export const isLiveChannel = (k: string): k is LiveChannelId => Object.hasOwn(LIVE_CHANNEL_BY_ID, k);

/**
 * A device's operating status, one vocabulary for every family: SunSpec's inverter states
 * (models 101-103 and 111-113 `St`: 1 off … 8 standby, 4 MPPT read as `running`); a profile maps
 * its vendor's codes onto these.
 */
export const DEVICE_STATUSES = [
  'off',
  'sleeping',
  'starting',
  'running',
  'throttled',
  'shutting_down',
  'fault',
  'standby',
] as const;
export type DeviceStatus = (typeof DEVICE_STATUSES)[number];
/**
 * A code the device sent that its table (a profile's `status.states`, SunSpec's enumeration)
 * does not list: shown as it came rather than guessed, outside the closed set the live views
 * build their enum from (Home Assistant shows it as unknown, /metrics as `status="unknown"` with
 * the code in a label).
 */
export type UnknownStatus = `unknown (code ${number})`;
export type StatusValue = DeviceStatus | UnknownStatus;
export const unknownStatus = (code: number): UnknownStatus => `unknown (code ${code})`;
/** the code of an unknown status, undefined for a status of the closed set */
export function unknownStatusCode(v: string): number | undefined {
  const m = /^unknown \(code (-?\d+)\)$/.exec(v);
  return m ? Number(m[1]) : undefined;
}

type Table = typeof CHANNEL_TABLE;
type Row = Table[number];
export type ChannelId = Row['id'];
/** a channel's row of the table, by id */
export type ChannelRow<C extends ChannelId> = Extract<Row, { id: C }>;
type IdsWhere<R extends Partial<ChannelSpec>> = Extract<Row, R>['id'];

export const CHANNELS: readonly ChannelId[] = CHANNEL_TABLE.map((c) => c.id);

export const CHANNEL_BY_ID = Object.fromEntries(CHANNEL_TABLE.map((c) => [c.id, c])) as {
  readonly [C in ChannelId]: ChannelRow<C>;
};

const byId = <T>(f: (c: Row) => T) =>
  Object.fromEntries(CHANNEL_TABLE.map((c) => [c.id, f(c)])) as Record<ChannelId, T>;
export const CHANNEL_UNITS: Record<ChannelId, string> = byId((c) => c.unit);

export const INCLUDE_GROUPS = ['default', 'energy'] as const satisfies readonly ChannelSpec['group'][];
export type IncludeGroup = (typeof INCLUDE_GROUPS)[number];
export const CHANNEL_GROUP: Record<ChannelId, IncludeGroup> = byId((c) => c.group);

/** Channels averaged over time, in table order (the bucketer's running sums are indexed by it). */
export type PowerChannel = IdsWhere<{ rollup: 'mean' }>;
export const POWER_CHANNELS = CHANNEL_TABLE.filter((c) => c.rollup === 'mean').map(
  (c) => c.id,
) as readonly PowerChannel[];

/** Channels a poll measures (everything but the counters, which the energy tracker keeps). */
export type InstantChannel = IdsWhere<{ rollup: 'mean' | 'last' }>;
/** Instant channels that are numbers: what a device profile maps registers to (the state has rules of its own). */
export type NumericInstantChannel = IdsWhere<{ rollup: 'mean' | 'last'; value: 'number' }>;
export const NUMERIC_INSTANT_CHANNELS = CHANNEL_TABLE.filter((c) => c.rollup !== 'end' && c.value === 'number').map(
  (c) => c.id,
) as readonly NumericInstantChannel[];

/** Channels whose bucket holds the last sample. */
export type LastChannel = IdsWhere<{ rollup: 'last' }>;
export const LAST_CHANNELS: readonly Extract<Row, { rollup: 'last' }>[] = CHANNEL_TABLE.filter(
  (c): c is Extract<Row, { rollup: 'last' }> => c.rollup === 'last',
);

export const GRID_STATES = ['ok', 'not_present', 'unknown'] as const;
export type GridState = (typeof GRID_STATES)[number];

/** What a channel's value is in JavaScript. */
export type ChannelValue<C extends ChannelId> = ChannelRow<C>['value'] extends 'state' ? GridState : number;

/** Instantaneous values of one poll, in spec units and signs, live channels included. Absent = not measured this time. */
export type InstantValues = { [C in InstantChannel]?: ChannelValue<C> } & {
  [C in NumericLiveChannel]?: number;
} & { status?: StatusValue };

/** How the API and the uplink send `soc` (docs/design.md "`soc` scale", site.yaml `api.socScale`). */
export type SocScale = 'percent' | 'fraction';

/** soc percent (2 decimals) as a fraction, without binary noise such as 0.5523000000000001 */
export function percentToFraction(p: number): number {
  return Math.round(p * 100) / 10_000;
}

/** The unit a channel is sent in: `soc` follows the soc scale. */
export function unitOf(c: ChannelId, socScale: SocScale): string {
  return c === 'soc' && socScale === 'fraction' ? 'fraction' : CHANNEL_UNITS[c];
}

/**
 * Raw lifetime counters as the device reports them, in Wh, as non-negative magnitudes.
 * They may reset or wrap; the energy tracker turns them into the spec's never-decreasing counters.
 */
export interface DeviceCounters {
  inWh?: number;
  outWh?: number;
  /** how the register behind each counter counts, where the driver knows it */
  inScale?: CounterScale;
  outScale?: CounterScale;
}

/**
 * A counter register's arithmetic in Wh under the scale in force when it was read: an acc32
 * with scale factor 1 wraps at 2^32 × 10 Wh and moves in steps of 10 Wh. Infinity: it does
 * not wrap (float, 64-bit, signed). The energy tracker judges wraps and steps by it.
 */
export interface CounterScale {
  wrapWh: number;
  stepWh: number;
}

export interface Reading {
  streamId: string;
  /** ms since epoch on the daemon's clock */
  ts: number;
  values: InstantValues;
  counters?: DeviceCounters;
}

/** Device kinds as they appear in telemetry entries (`deviceKind` / `kind`). */
export const DEVICE_KINDS = ['battery_pack', 'inverter', 'meter', 'pv'] as const;
export type DeviceKind = (typeof DEVICE_KINDS)[number];
