import type { DeviceConfig } from '../config/types.js';
import type { DeviceDriver } from './driver.js';
import { ProfileDevice } from './engine.js';
import { loadProfiles, type ProfileRegistry, SUNSPEC } from './registry.js';
import { SunSpecDevice } from './sunspec.js';

export { ControlMapError, createProfileControl, type ProfileStorageControl } from './control.js';
export type { DeviceDriver, DevicePoll } from './driver.js';
export { createProfileLimit, LimitMapError, type ProfileActivePowerLimit } from './limit.js';
export { limitRevertNotes, profileLimitsFor } from './power-limits.js';
export { loadProfiles, ProfileLoadError, ProfileRegistry, profilesFor } from './registry.js';

let shipped: ProfileRegistry | undefined;

/**
 * The driver for a configured device, chosen by its `profile`: SunSpec discovery, or the YAML
 * profile of that name. The daemon passes the registry it loaded at start; callers without one
 * (tools, the demo's pre-fill) get the shipped profiles, loaded on first use.
 */
export function createDriver(config: DeviceConfig, profiles?: ProfileRegistry): DeviceDriver {
  if (config.profile === SUNSPEC) return new SunSpecDevice(config);
  const registry = profiles ?? (shipped ??= loadProfiles());
  const profile = registry.get(config.profile);
  if (!profile)
    throw new Error(
      `device ${config.id}: unknown profile '${config.profile}' (known: ${[SUNSPEC, ...registry.names()].join(', ')})`,
    );
  return new ProfileDevice(config, profile);
}
