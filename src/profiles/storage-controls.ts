/**
 * The storage control a configured device offers (src/core/storage-control.ts): SunSpec model 124
 * on a `profile: sunspec` inverter; undefined for a device without one.
 */
import type { DeviceConfig } from '../config/types.js';
import type { RegisterReader } from '../core/register-reader.js';
import type { StorageControl } from '../core/storage-control.js';
import { SunSpecStorageControl } from './sunspec-storage.js';

export async function storageControlFor(
  device: DeviceConfig,
  bus: RegisterReader,
  revertSeconds: number,
): Promise<StorageControl | undefined> {
  if (device.profile === 'sunspec') return SunSpecStorageControl.discover(bus, device.connection.unitId, revertSeconds);
  return undefined;
}
