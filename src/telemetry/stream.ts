import type { ChannelId, DeviceKind, PowerChannel } from '../core/channels.js';

/** One telemetry stream as the bucketer and the query see it. */
export interface StreamDef {
  /** stream key (the API's sensor id) */
  id: string;
  deviceId: string;
  deviceKind: DeviceKind;
  /** what the stream measures, in words (e.g. 'Battery', 'PV module 2'): names live sensors (Home Assistant) */
  label?: string;
  /** spec channels this stream carries; anything else in a reading is ignored */
  channels: ChannelId[];
  /** integrate this power channel for the energy counters when the device has no counters */
  energyFrom?: PowerChannel;
  /** the device's poll period when it differs from the site's; a sample holds for 3 of them */
  pollPeriodMs?: number;
  /** the device's raw counters wrap at this many Wh; default 2^32 (acc32 counting Wh) */
  counterWrapWh?: number;
}
