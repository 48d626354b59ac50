import type { ChannelId, DeviceKind, LiveChannelId, PowerChannel } from './channels.js';

/**
 * Stream (sensor) ids of a device, built from the configured device id. Clients must not parse
 * them (docs/api.md "Sensor ID suffixes (telemetry streams)"); they are stable across restarts
 * because config ids are.
 */
export const streamIds = {
  inverter: (inverterId: string) => inverterId,
  batteryAggregate: (inverterId: string) => `${inverterId}__bb_agg`,
  batteryBlock: (batteryId: string) => batteryId,
  pvAggregate: (inverterId: string) => `${inverterId}__dcm`,
  pvModule: (inverterId: string, n: number) => `${inverterId}__pv${n}`,
  gridMeter: (meterId: string) => `${meterId}__GRID_METER_DERIVED`,
  consumptionMeter: (meterId: string) => meterId,
  /** house consumption from the energy balance, on sites without a consumption meter */
  consumptionDerived: (siteId: string) => `${siteId}__CONSUMPTION_METER_DERIVED`,
};

/** A stream's place in the power flow; `house` is a consumption meter or the derived consumption. */
export const STREAM_ROLES = ['inverter', 'battery', 'battery_block', 'pv', 'pv_module', 'grid', 'house'] as const;
export type StreamRole = (typeof STREAM_ROLES)[number];

/** One telemetry stream as the bucketer and the query see it. */
export interface StreamDef {
  /** stream key (the API's sensor id) */
  id: string;
  deviceId: string;
  deviceKind: DeviceKind;
  /** what the stream measures, in words (e.g. 'Battery', 'PV module 2'): names live sensors (Home Assistant) */
  label?: string;
  /** its place in the site's power flow: lets dashboards sum streams without parsing their ids */
  role?: StreamRole;
  /** spec channels this stream carries; anything else in a reading is ignored */
  channels: ChannelId[];
  /** live channels (not bucketed) its device has reported, in table order; docs/design.md "Live channels" */
  live?: LiveChannelId[];
  /** integrate this power channel for the energy counters when the device has no counters */
  energyFrom?: PowerChannel;
  /** the device's poll period when it differs from the site's; a sample holds for 3 of them */
  pollPeriodMs?: number;
  /** the device's raw counters wrap at this many Wh; default 2^32 (acc32 counting Wh) */
  counterWrapWh?: number;
}
