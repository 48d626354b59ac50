/**
 * The registers a third party must never write while battery control is on (docs/modbus-proxy.md
 * "Writes"): every register of the `control:` map of each storage system control manages, or
 * SunSpec model 124 of a `profile: sunspec` inverter, on the unit they answer on. Read from the
 * same data control writes by (src/profiles/control-compile.ts, src/profiles/sunspec-storage.ts),
 * so a map that gains a register protects it here too.
 */
import type { DeviceConfig } from '../config/types.js';
import type { RegisterReader } from '../core/register-reader.js';
import { TYPE_WIDTH } from '../modbus/codec.js';
import { linkKey } from '../modbus/link.js';
import { discoverSunSpec } from '../modbus/sunspec/discovery.js';
import { type ProfileRegistry, SUNSPEC } from '../profiles/registry.js';

/** holding registers [address, address + count) of one unit */
export interface RegisterRange {
  address: number;
  count: number;
}

export interface ManagedStorage {
  config: DeviceConfig;
}

/**
 * The control registers on `target`'s link and unit of the storage systems control manages;
 * empty when none of them answers there. SunSpec's model 124 is found on the device (through
 * `reader`); a device where it cannot be found is protected whole (null).
 */
export async function controlRegistersAt(
  target: DeviceConfig,
  storages: readonly ManagedStorage[],
  profiles: ProfileRegistry,
  reader: RegisterReader,
): Promise<RegisterRange[] | null> {
  const link = linkKey(target.connection);
  const out: RegisterRange[] = [];
  for (const s of storages) {
    if (linkKey(s.config.connection) !== link) continue;
    if (s.config.profile === SUNSPEC) {
      if (s.config.connection.unitId !== target.connection.unitId) continue;
      const map = await discoverSunSpec(reader, s.config.connection.unitId).catch(() => null);
      const m124 = map?.models.find((m) => m.id === 124);
      if (!m124) return null;
      // the model header too: a write there would move the model under control
      out.push({ address: m124.address - 2, count: m124.length + 2 });
      continue;
    }
    const control = profiles.get(s.config.profile)?.control;
    if (!control || (control.unitId ?? s.config.connection.unitId) !== target.connection.unitId) continue;
    for (const writes of Object.values(control.modes))
      for (const w of writes ?? []) out.push({ address: w.address, count: TYPE_WIDTH[w.type] });
  }
  return out;
}

export function overlaps(ranges: readonly RegisterRange[], address: number, count: number): RegisterRange | undefined {
  return ranges.find((r) => address < r.address + r.count && r.address < address + count);
}

/** The first register of a write to [address, address + count) that battery control holds, or undefined: what a refusal names. */
export function firstProtected(ranges: readonly RegisterRange[], address: number, count: number): number | undefined {
  let first: number | undefined;
  for (const r of ranges)
    if (address < r.address + r.count && r.address < address + count) {
      const at = Math.max(address, r.address);
      if (first === undefined || at < first) first = at;
    }
  return first;
}
