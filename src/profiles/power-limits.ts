/**
 * The active power limits a configured inverter offers from profiles' `limit:` maps
 * (src/core/active-power-limit.ts, docs/limits-vendors.md): its own profile's, or, for a
 * `profile: sunspec` inverter, those of a vendor profile read beside SunSpec on the same link and
 * unit (SolarEdge's export control registers are the inverter's, at its unit, and live in the
 * `solaredge-storedge` profile with the StorEdge registers, as its control map does:
 * src/profiles/storage-controls.ts). `activePowerLimitFor` is what the limits loop drives: SunSpec
 * 704, else 123 (sunspec-limit.ts), else a profile's `output` map, else its `device-export-limit`
 * map (the device's own export limiter at its own meter, `holds: 'export'`: the loop writes the
 * export limit in force there instead of a cap; docs/limits.md "Which inverters the loop limits").
 */
import type { DeviceConfig } from '../config/types.js';
import type { ActivePowerLimit } from '../core/active-power-limit.js';
import type { RegisterReader } from '../core/register-reader.js';
import { linkKey } from '../modbus/link.js';
import { createProfileLimit, limitModesOf, type ProfileActivePowerLimit, revertWarning } from './limit.js';
import type { LimitMode } from './limit-compile.js';
import { loadProfiles, type ProfileRegistry, SUNSPEC } from './registry.js';
import { discoverSunSpecLimit } from './sunspec-limit.js';

/** Every limit map that applies to `inverter` (one per kind), given the site's other devices. */
export function profileLimitsFor(
  inverter: DeviceConfig,
  devices: readonly DeviceConfig[],
  profiles: ProfileRegistry = loadProfiles(),
): ProfileActivePowerLimit[] {
  const build = (name: string, unitId: number) => {
    const p = profiles.get(name);
    if (!p) return [];
    return limitModesOf(p).map((mode: LimitMode) => createProfileLimit(p, unitId, mode)!);
  };
  if (inverter.profile !== SUNSPEC) return build(inverter.profile, inverter.connection.unitId);
  const link = linkKey(inverter.connection);
  for (const d of devices) {
    if (d === inverter || d.profile === SUNSPEC || d.connection.unitId !== inverter.connection.unitId) continue;
    if (linkKey(d.connection) !== link || !profiles.get(d.profile)?.besideSunSpec) continue;
    const found = build(d.profile, d.connection.unitId);
    if (found.length > 0) return found;
  }
  return [];
}

const KIND: Record<LimitMode, string> = { output: 'output limit', 'device-export-limit': 'export limit' };

/**
 * One line per inverter limit that does not keep the site limited once the gateway is gone (it
 * reverts to unlimited, or no source says what it does), for `sitegw check-config`: the installer
 * then sets the device's own fail-safe (docs/limits-vendors.md).
 */
export function limitRevertNotes(devices: readonly DeviceConfig[], profiles?: ProfileRegistry): string[] {
  const out: string[] = [];
  for (const d of devices) {
    if (d.role !== 'inverter') continue;
    for (const l of profileLimitsFor(d, devices, profiles)) {
      const why = revertWarning(l);
      if (!why) continue;
      // the profile's own words say what there is to know (SMA: the installer's fallback)
      const says = l.says ? ` (${l.says})` : '';
      out.push(`device ${d.id} (profile ${d.profile}) ${KIND[l.mode]}: ${why}${says}; see docs/limits-vendors.md`);
    }
  }
  return out;
}

/**
 * The active power limit the limits loop drives on `device`: SunSpec 704, else 123 (with
 * `revertSeconds`), else the `output` map of its profile or of a vendor profile read beside SunSpec
 * (with the revert the map's source gives), else its `device-export-limit` map; undefined without one.
 */
export async function activePowerLimitFor(
  device: DeviceConfig,
  bus: RegisterReader,
  revertSeconds: number,
  devices: readonly DeviceConfig[] = [device],
  profiles?: ProfileRegistry,
): Promise<ActivePowerLimit | undefined> {
  if (device.profile === SUNSPEC) {
    const sunspec = await discoverSunSpecLimit(bus, device.connection.unitId, revertSeconds);
    if (sunspec) return sunspec;
  }
  const maps = profileLimitsFor(device, devices, profiles);
  return maps.find((l) => l.mode === 'output') ?? maps.find((l) => l.mode === 'device-export-limit');
}
