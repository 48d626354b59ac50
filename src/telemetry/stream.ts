import type { ChannelId, DeviceKind, PowerChannel } from '../core/channels.js';

/** One telemetry stream (sensor): what the bucketer accumulates and the API serves. */
export interface StreamDef {
  id: string;
  deviceId: string;
  deviceKind: DeviceKind;
  channels: ChannelId[];
  /** integrate this power channel into the energy counters when the device reports no counters */
  energyFrom?: PowerChannel;
}
