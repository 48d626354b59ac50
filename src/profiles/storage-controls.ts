/**
 * The storage control a configured device offers (src/core/storage-control.ts): SunSpec model 124
 * on a `profile: sunspec` inverter, a profile's `control:` map otherwise (docs/control.md "Vendor
 * control maps"); undefined for a device without either.
 *
 * A battery on the inverter's own link whose profile carries the map comes first: SolarEdge's
 * StorEdge control registers (0xE004-0xE011) are the inverter's, at its unit, beside its SunSpec
 * map, which has no model 124 (SolarEdge application note "Power Control Open Protocol for
 * SolarEdge Inverters", storage control section; solaredge-modbus-multi issue #313: commands go
 * to the StorEdge inverter), while site.yaml describes them with the battery's profile
 * (`solaredge-storedge`, besideSunSpec).
 */
import type { DeviceConfig } from '../config/types.js';
import type { RegisterReader } from '../core/register-reader.js';
import type { StorageControl } from '../core/storage-control.js';
import { linkKey } from '../modbus/link.js';
import { createProfileControl } from './control.js';
import { loadProfiles, type ProfileRegistry, SUNSPEC } from './registry.js';
import { SunSpecStorageControl } from './sunspec-storage.js';

export async function storageControlFor(
  device: DeviceConfig,
  bus: RegisterReader,
  revertSeconds: number,
  profiles?: ProfileRegistry,
  /** the inverter's battery devices (site.batteriesOf) */
  batteries: readonly DeviceConfig[] = [],
): Promise<StorageControl | undefined> {
  const registry = profiles ?? loadProfiles();
  const link = linkKey(device.connection);
  for (const b of batteries) {
    const p = registry.get(b.profile);
    if (p?.control && linkKey(b.connection) === link) return createProfileControl(p, b.connection.unitId);
  }
  if (device.profile === SUNSPEC) return SunSpecStorageControl.discover(bus, device.connection.unitId, revertSeconds);
  const profile = registry.get(device.profile);
  return profile ? createProfileControl(profile, device.connection.unitId) : undefined;
}
