import type { ChannelId, DeviceKind, LiveChannelId, PowerChannel } from './channels.js';
import type { DeviceRole } from './device-role.js';
import { type StreamRole, streamIds } from './streams.js';

/** One stream a device of a role produces. */
export interface RoleStream {
  /** its id from the device id (and, for PV modules, the module's number from 1) */
  id: (deviceId: string, n: number) => string;
  deviceKind: DeviceKind;
  /** words for it; a PV module's number is appended */
  label: string;
  role: StreamRole;
  channels: readonly ChannelId[];
  /** the live channels (core/channels.ts LIVE_CHANNEL_TABLE) it may carry, where its device reports them */
  live: readonly LiveChannelId[];
  /** integrated for the energy counters when the device has none */
  energyFrom: PowerChannel;
  /**
   * how many there are: one; one when batteries sit on the inverter's DC bus (the aggregate);
   * one per PV module the inverter reported
   */
  count: 'one' | 'ifBatteries' | 'perModule';
}

export interface RoleSpec {
  kind: DeviceKind;
  /** the first is the device's own stream, the one its poll reads */
  streams: readonly [RoleStream, ...RoleStream[]];
}

const ENERGY = ['energy_Wh_increment', 'energy_Wh_decrement'] as const;
const BATTERY_CHANNELS: readonly ChannelId[] = ['power_W', 'soc', 'soh', ...ENERGY];
const PV_CHANNELS: readonly ChannelId[] = ['power_W', ...ENERGY];
const HOUSE_CHANNELS: readonly ChannelId[] = ['power_W', ...ENERGY];
const AC_PHASES = [
  'voltage_L1_V',
  'voltage_L2_V',
  'voltage_L3_V',
  'current_L1_A',
  'current_L2_A',
  'current_L3_A',
  'power_L1_W',
  'power_L2_W',
  'power_L3_W',
] as const satisfies readonly LiveChannelId[];
const METER_LIVE = ['frequency_Hz', ...AC_PHASES] as const satisfies readonly LiveChannelId[];
const DC_LIVE = ['voltage_DC_V', 'current_DC_A'] as const satisfies readonly LiveChannelId[];

const battery = {
  deviceKind: 'battery_pack',
  label: 'Battery',
  channels: BATTERY_CHANNELS,
  live: [...DC_LIVE, 'temperature_C', 'status'],
  energyFrom: 'power_W',
} as const;
const pv = { deviceKind: 'pv', channels: PV_CHANNELS, live: DC_LIVE, energyFrom: 'power_W' } as const;

/**
 * The role table: what a configured device of each role is (its telemetry kind) and which
 * streams it produces with which channels. The site lists streams from it and the drivers (YAML
 * profiles, SunSpec) address their readings by it, so a role's streams are written down once.
 */
export const ROLES: Readonly<Record<DeviceRole, RoleSpec>> = {
  inverter: {
    kind: 'inverter',
    streams: [
      {
        id: streamIds.inverter,
        deviceKind: 'inverter',
        label: 'Inverter',
        role: 'inverter',
        channels: ['power_AC_W', 'power_DC_W', ...ENERGY],
        live: [...METER_LIVE, ...DC_LIVE, 'temperature_C', 'status'],
        energyFrom: 'power_AC_W',
        count: 'one',
      },
      { ...battery, id: streamIds.batteryAggregate, role: 'battery', count: 'ifBatteries' },
      { ...pv, id: streamIds.pvAggregate, label: 'PV', role: 'pv', count: 'one' },
      { ...pv, id: streamIds.pvModule, label: 'PV module', role: 'pv_module', count: 'perModule' },
    ],
  },
  battery: {
    kind: 'battery_pack',
    streams: [{ ...battery, id: streamIds.batteryBlock, role: 'battery_block', count: 'one' }],
  },
  'grid-meter': {
    kind: 'meter',
    streams: [
      {
        id: streamIds.gridMeter,
        deviceKind: 'meter',
        label: 'Grid',
        role: 'grid',
        channels: ['power_W', 'state', ...ENERGY],
        live: METER_LIVE,
        energyFrom: 'power_W',
        count: 'one',
      },
    ],
  },
  'consumption-meter': {
    kind: 'meter',
    streams: [
      {
        id: streamIds.consumptionMeter,
        deviceKind: 'meter',
        label: 'House',
        role: 'house',
        channels: HOUSE_CHANNELS,
        live: METER_LIVE,
        energyFrom: 'power_W',
        count: 'one',
      },
    ],
  },
};

/** The stream a device's own poll reads (its role's first). */
export function ownStreamId(role: DeviceRole, deviceId: string): string {
  return ROLES[role].streams[0].id(deviceId, 0);
}

/** Whether a role's own stream carries a channel (a grid meter's `state`). */
export function roleMeasures(role: DeviceRole, channel: ChannelId): boolean {
  return ROLES[role].streams[0].channels.includes(channel);
}

/**
 * House consumption from the energy balance, on sites without a consumption meter: a stream of
 * the site rather than of a device's role (it belongs to the grid meter, see Site.streams()).
 */
export const DERIVED_CONSUMPTION: Omit<RoleStream, 'id' | 'count'> = {
  deviceKind: 'meter',
  label: 'House (derived)',
  role: 'house',
  channels: HOUSE_CHANNELS,
  live: [],
  energyFrom: 'power_W',
};
