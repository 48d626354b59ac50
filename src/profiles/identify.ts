/**
 * How a device of a profile is recognised (for `sitegw scan`) and how it tells who it is (for the
 * device's identity in the API). Each register is read on its own: identification runs once per
 * unit, and a device that refuses one address must not hide the others.
 */

import type { DeviceIdentity } from '../core/identity.js';
import type { RegisterReader } from '../core/register-reader.js';
import type { CompiledIdentityRegister, CompiledMatch, DeviceProfile, ValueRef } from './compiled.js';
import { isException, RegisterCache, readRange } from './registers.js';

async function readOne(
  reader: RegisterReader,
  unitId: number,
  ref: ValueRef,
  profile: DeviceProfile,
  cache: RegisterCache,
): Promise<boolean> {
  const range = { fn: ref.fn, address: ref.address, count: ref.count };
  try {
    cache.store(range, await readRange(reader, unitId, range, `profile ${profile.name}, ${ref.label}`));
    return true;
  } catch (err) {
    if (isException(err)) return false;
    throw err;
  }
}

function satisfies(m: CompiledMatch, cache: RegisterCache): boolean {
  if (m.pattern) {
    const t = cache.text(m.ref);
    return t !== undefined && m.pattern.test(t);
  }
  const v = cache.number(m.ref);
  if (v === undefined) return false;
  if (m.in) return m.in.has(v);
  const scaled = v * m.scale;
  return m.range !== undefined && scaled >= m.range[0] && scaled <= m.range[1];
}

/**
 * True when the unit answers every match register of the profile with an expected value and no
 * `unless` register with the value another kind of device answers (identify.unless). A
 * Modbus exception means "not this kind of device"; a timeout or broken connection is thrown,
 * because then nothing can be said about the unit.
 */
export async function matchesProfile(profile: DeviceProfile, reader: RegisterReader, unitId: number): Promise<boolean> {
  const cache = new RegisterCache();
  for (const m of profile.identify.match) {
    if (!(await readOne(reader, unitId, m.ref, profile, cache))) return false;
    if (!satisfies(m, cache)) return false;
  }
  // an answer only another kind gives (an SDM630's system type on a unit that looks like an SDM120)
  for (const m of profile.identify.unless) {
    if ((await readOne(reader, unitId, m.ref, profile, cache)) && satisfies(m, cache)) return false;
  }
  return true;
}

async function identityField(
  r: CompiledIdentityRegister | undefined,
  reader: RegisterReader,
  unitId: number,
  profile: DeviceProfile,
  cache: RegisterCache,
): Promise<string | undefined> {
  if (!r || !(await readOne(reader, unitId, r.ref, profile, cache))) return undefined;
  // padding on either side is not part of the name (Fox ESS H3 writes its model as " H3-10.0-E")
  const t = cache.text(r.ref)?.trim();
  if (!t) return undefined;
  return r.map ? (r.map[t] ?? t) : t;
}

/** Manufacturer, model, serial and version as far as the device reports them. */
export async function readIdentity(
  profile: DeviceProfile,
  reader: RegisterReader,
  unitId: number,
): Promise<DeviceIdentity> {
  const cache = new RegisterCache();
  const { registers } = profile.identify;
  const manufacturer =
    (await identityField(registers.manufacturer, reader, unitId, profile, cache)) ?? profile.identify.manufacturer;
  const model = (await identityField(registers.model, reader, unitId, profile, cache)) ?? profile.identify.model;
  const serial = await identityField(registers.serial, reader, unitId, profile, cache);
  const version = await identityField(registers.version, reader, unitId, profile, cache);
  return {
    manufacturer,
    ...(model ? { model } : {}),
    ...(serial ? { serial } : {}),
    ...(version ? { version } : {}),
  };
}
