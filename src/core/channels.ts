/**
 * Spec channels (docs/api.md "Channels") and the values a reading carries.
 * Signs follow docs/design.md: positive = energy flowing into the device.
 */
export const CHANNELS = [
  'power_W',
  'power_AC_W',
  'power_DC_W',
  'soc',
  'soh',
  'energy_Wh_increment',
  'energy_Wh_decrement',
  'state',
] as const;
export type ChannelId = (typeof CHANNELS)[number];

export const CHANNEL_UNITS: Record<ChannelId, string> = {
  power_W: 'W',
  power_AC_W: 'W',
  power_DC_W: 'W',
  soc: 'percent',
  soh: 'percent',
  energy_Wh_increment: 'Wh',
  energy_Wh_decrement: 'Wh',
  state: 'None',
};

/** Which `include` group a channel belongs to (telemetry `include`, WS `telemetryInclude`). */
export const INCLUDE_GROUPS = ['default', 'energy'] as const;
export type IncludeGroup = (typeof INCLUDE_GROUPS)[number];
export const CHANNEL_GROUP: Record<ChannelId, IncludeGroup> = {
  power_W: 'default',
  power_AC_W: 'default',
  power_DC_W: 'default',
  soc: 'default',
  soh: 'default',
  energy_Wh_increment: 'energy',
  energy_Wh_decrement: 'energy',
  state: 'default',
};

export const POWER_CHANNELS = ['power_W', 'power_AC_W', 'power_DC_W'] as const;
export type PowerChannel = (typeof POWER_CHANNELS)[number];

export const GRID_STATES = ['ok', 'not_present', 'unknown'] as const;
export type GridState = (typeof GRID_STATES)[number];

/** Instantaneous values of one poll, in spec units and signs. Absent = not measured this time. */
export interface InstantValues {
  power_W?: number;
  power_AC_W?: number;
  power_DC_W?: number;
  soc?: number;
  soh?: number;
  state?: GridState;
}

/**
 * Raw lifetime counters as the device reports them, in Wh, as non-negative magnitudes.
 * They may reset or wrap; the energy tracker turns them into the spec's never-decreasing counters.
 */
export interface DeviceCounters {
  inWh?: number;
  outWh?: number;
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
