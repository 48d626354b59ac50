import type { DeviceConfig } from '../config/types.js';
import type { DeviceDriver } from './driver.js';
import { SunSpecDevice } from './sunspec.js';

export type { DeviceDriver, DeviceIdentity, DevicePoll } from './driver.js';

/** The driver for a configured device, chosen by its `profile`. */
export function createDriver(config: DeviceConfig): DeviceDriver {
  if (config.profile === 'sunspec') return new SunSpecDevice(config);
  throw new Error(`device ${config.id}: unknown profile '${config.profile}'`);
}
