/**
 * The device profiles the daemon knows, loaded once at start from device-profiles/. A broken
 * profile stops the start with its file, line and hint: polling a device with half a register
 * map would put wrong numbers into buckets that can never be corrected.
 */
import { fileURLToPath } from 'node:url';
import { DEVICE_ROLES, type DeviceRole } from '../core/device-role.js';
import type { DeviceProfile } from './compiled.js';
import { formatProfileErrors, type ProfileDir, readProfileDir } from './load.js';

/** device-profiles/ at the package root (from src/profiles under tsx, dist/profiles when built) */
export const DEFAULT_PROFILE_DIR = fileURLToPath(new URL('../../device-profiles/', import.meta.url));

/** The profile name that selects SunSpec discovery instead of a file. */
export const SUNSPEC = 'sunspec';

export class ProfileRegistry {
  constructor(private readonly profiles: ReadonlyMap<string, DeviceProfile>) {}

  get(name: string): DeviceProfile | undefined {
    return this.profiles.get(name);
  }

  names(): string[] {
    return [...this.profiles.keys()].sort();
  }

  all(): DeviceProfile[] {
    return [...this.profiles.values()];
  }
}

export class ProfileLoadError extends Error {
  constructor(readonly lines: readonly string[]) {
    super(`device profiles have mistakes:\n${lines.join('\n')}`);
    this.name = 'ProfileLoadError';
  }
}

/** Loads every profile of `dir`; throws ProfileLoadError naming each mistake if any file is broken. */
export function loadProfiles(dir: string = DEFAULT_PROFILE_DIR): ProfileRegistry {
  const d = readProfileDir(dir);
  if (d.broken.size > 0) throw new ProfileLoadError(formatProfileErrors(d));
  return new ProfileRegistry(d.profiles);
}

/**
 * The profiles a site's devices can name: none read for a site of SunSpec devices alone (reading
 * the folder compiles the profile schema, over a second of CPU: bench/demo-start.ts), otherwise
 * every file of `dir`, so a broken one stops the start as `loadProfiles` says.
 */
export function profilesFor(
  devices: readonly { profile: string }[],
  dir: string = DEFAULT_PROFILE_DIR,
): ProfileRegistry {
  return devices.some((d) => d.profile !== SUNSPEC) ? loadProfiles(dir) : new ProfileRegistry(new Map());
}

let installed: ProfileDir | undefined;

/** The shipped profiles, read once per process, broken ones included (config checks report them). */
export function installedProfiles(): ProfileDir {
  installed ??= readProfileDir(DEFAULT_PROFILE_DIR);
  return installed;
}

/** The roles a profile describes, in a fixed order. */
export function rolesOf(profile: DeviceProfile): DeviceRole[] {
  return DEVICE_ROLES.filter((r) => profile.roles[r] !== undefined);
}
