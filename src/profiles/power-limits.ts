/**
 * The active power limit a configured inverter offers (src/core/active-power-limit.ts): SunSpec
 * 704, else 123, on a `profile: sunspec` inverter (sunspec-limit.ts); undefined for a device
 * without one. The profiles' `limit:` maps (docs/limits-vendors.md) join here.
 */
import type { DeviceConfig } from '../config/types.js';
import type { ActivePowerLimit } from '../core/active-power-limit.js';
import type { RegisterReader } from '../core/register-reader.js';
import { SUNSPEC } from './registry.js';
import { discoverSunSpecLimit } from './sunspec-limit.js';

export async function activePowerLimitFor(
  device: DeviceConfig,
  bus: RegisterReader,
  revertSeconds: number,
): Promise<ActivePowerLimit | undefined> {
  if (device.profile === SUNSPEC) return discoverSunSpecLimit(bus, device.connection.unitId, revertSeconds);
  return undefined;
}
