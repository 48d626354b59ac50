/**
 * The storage control a configured device offers (src/core/storage-control.ts): SunSpec model 124
 * on a `profile: sunspec` inverter, a profile's `control:` map otherwise (docs/control.md "Vendor
 * control maps"); undefined for a device without either.
 */
import type { DeviceConfig } from '../config/types.js';
import type { RegisterReader } from '../core/register-reader.js';
import type { StorageControl } from '../core/storage-control.js';
import { createProfileControl } from './control.js';
import { loadProfiles, type ProfileRegistry, SUNSPEC } from './registry.js';
import { SunSpecStorageControl } from './sunspec-storage.js';

export async function storageControlFor(
  device: DeviceConfig,
  bus: RegisterReader,
  revertSeconds: number,
  profiles?: ProfileRegistry,
): Promise<StorageControl | undefined> {
  if (device.profile === SUNSPEC) return SunSpecStorageControl.discover(bus, device.connection.unitId, revertSeconds);
  const profile = (profiles ?? loadProfiles()).get(device.profile);
  return profile ? createProfileControl(profile, device.connection.unitId) : undefined;
}
