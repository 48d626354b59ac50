import type { Reading } from '../core/channels.js';
import type { DeviceIdentity } from '../core/identity.js';
import type { RegisterReader } from '../core/register-reader.js';

/** What one poll of a device yields: readings for its streams and facts it told about itself. */
export interface DevicePoll {
  readings: Reading[];
  /** battery capacity learned from the device, Wh */
  capacityWh?: number;
  /** number of MPPT modules (PV optimisers / strings) behind an inverter */
  pvModules?: number;
}

/**
 * A device as the poller sees it: whatever family it is (SunSpec, a YAML register profile),
 * it reads registers through a bus and returns readings in spec channels, units and signs.
 */
export interface DeviceDriver {
  readonly identity: DeviceIdentity;
  /** forget anything learned about the register map (after a firmware change or a decode error) */
  reset(): void;
  poll(reader: RegisterReader, now: () => number): Promise<DevicePoll>;
}
