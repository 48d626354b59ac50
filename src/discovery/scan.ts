/**
 * `sitegw scan`: which devices answer on a bus, and what they are. For each unit id, in order:
 *   1. SunSpec: the SunS marker at 40000, 0 or 50000, the model chain, and the common model's
 *      manufacturer, model and serial (src/modbus/sunspec/discovery.ts);
 *   2. otherwise each device profile's identity registers (src/profiles/identify.ts).
 * A unit that does not answer the first request (a timeout) is silent and costs exactly one
 * request, and a gateway's "no device at this unit id" (exception 10 or 11) ends the unit at
 * once, so a sweep of 1..247 takes at most about units × (timeout + the bus's gap after a
 * timeout) and never hangs on a silent bus: every request has a timeout (QueuedBus).
 */
import type { DeviceRole } from '../core/device-role.js';
import type { DeviceIdentity } from '../core/identity.js';
import type { RegisterReader } from '../core/register-reader.js';
import { ModbusError, toModbusError } from '../modbus/errors.js';
import { discoverSunSpec, readModel } from '../modbus/sunspec/discovery.js';
import type { DeviceProfile } from '../profiles/compiled.js';
import { matchesProfile, readIdentity } from '../profiles/identify.js';
import { rolesOf } from '../profiles/registry.js';
import { hasStorageModules } from '../profiles/sunspec.js';
import { type KnownMeterSign, vendorMeterSign } from '../profiles/sunspec-vendors.js';

export interface ScanFinding {
  unitId: number;
  /** how it was recognised */
  family: 'sunspec' | 'profile';
  /** the `profile:` to write in site.yaml: 'sunspec' or a profile name */
  profile: string;
  identity: DeviceIdentity;
  /** SunSpec model ids, in chain order */
  models?: number[];
  /** the roles it can take, most likely first */
  roles: DeviceRole[];
  /** further unit ids where the same device (same identity) answered: a device that ignores the unit id */
  alsoAt: number[];
  /** other profiles whose identity registers this device matched just as well */
  alternatives?: string[];
  /** SunSpec inverters whose chain holds their battery (124 and 160's storage modules): offered as a battery on the same unit */
  chainBattery?: boolean;
  /** SunSpec meters: the sign its power is read with (auto: from the manufacturer) and the source that documents it */
  meterSign?: { sign: KnownMeterSign; source?: string };
  /**
   * SunSpec devices: profiles whose identity registers the same unit answers as well — a vendor's
   * own registers next to its SunSpec map (a SolarEdge inverter's StorEdge battery block, KOSTAL's
   * own map), each a device of its own on the unit
   */
  beside?: { profile: string; identity: DeviceIdentity; roles: DeviceRole[] }[];
}

export interface ScanResult {
  found: ScanFinding[];
  /** unit ids that gave no answer at all */
  silent: number[];
  /** unit ids that answered, but as no SunSpec device and no known profile */
  unknown: { unitId: number; reason: string }[];
  /** unit ids that answered garbage or broke off (a wiring or settings problem more than an absent device) */
  failed: { unitId: number; error: ModbusError }[];
  /** requests put on the wire */
  requests: number;
  /** unit ids that gave at least one answer (an exception included; a gateway's "no device here" not) */
  answered: number[];
}

export interface ScanOptions {
  units: readonly number[];
  profiles: readonly DeviceProfile[];
  /** called after each unit, for progress output */
  onUnit?: (unitId: number, outcome: 'found' | 'silent' | 'unknown' | 'failed') => void;
}

/** An answer that means "nobody at this unit id" from a gateway rather than "not this register" from a device. */
const NO_DEVICE_EXCEPTIONS = new Set([10, 11]);

/** A gateway's "no device at this unit id": as good as silence (and thrown through discovery like a timeout). */
class NoDevice extends ModbusError {
  constructor(cause: ModbusError) {
    super('timeout', cause.message, cause.exceptionCode);
  }
}

/** Counts requests, notes the units that answered, and turns a gateway's "no device here" into NoDevice. */
function probeReader(reader: RegisterReader, count: () => void, answered: Set<number>): RegisterReader {
  const wrap =
    (fn: (u: number, a: number, n: number) => Promise<number[]>) =>
    async (u: number, a: number, n: number): Promise<number[]> => {
      count();
      try {
        const values = await fn(u, a, n);
        answered.add(u);
        return values;
      } catch (err) {
        const e = toModbusError(err);
        if (e.kind === 'exception' && NO_DEVICE_EXCEPTIONS.has(e.exceptionCode ?? -1)) throw new NoDevice(e);
        if (e.kind === 'exception') answered.add(u);
        throw e;
      }
    };
  return {
    readHolding: wrap((u, a, n) => reader.readHolding(u, a, n)),
    readInput: wrap((u, a, n) => reader.readInput(u, a, n)),
  };
}

const INVERTER_MODELS = new Set([101, 102, 103, 111, 112, 113]);
const METER_MODELS = new Set([201, 202, 203, 204, 211, 212, 213, 214]);
const BATTERY_MODELS = new Set([124, 802]);

/**
 * The meters an inverter's SunSpec chain holds after the inverter (SolarEdge: up to three from
 * 40121), each a logical device of its own on the same unit, numbered in chain order as
 * site.yaml's `sunspecMeter` counts them. A unit without inverter models has none. (A chain's
 * 124 storage model alone is not offered as a battery: on most sites the battery blocks are
 * units of their own, and a second battery entry would count them twice; see chainBattery.)
 */
export function chainMeters(models: readonly number[]): { sunspecMeter?: number; model: number }[] {
  if (!models.some((m) => INVERTER_MODELS.has(m))) return [];
  const meters = models.filter((m) => METER_MODELS.has(m));
  return meters.map((model, i) => ({ model, ...(meters.length > 1 ? { sunspecMeter: i + 1 } : {}) }));
}

/**
 * Whether an inverter's chain may hold its battery: storage 124 (the state of charge) and MPPT
 * 160 beside the inverter models, as a Fronius GEN24 Plus serves it (SunSpec models 124 and 160;
 * evcc's fronius-gen24 template reads the battery from 124 ChaState and 160's charge and
 * discharge modules). probeUnit then reads 160: only modules named for the battery's flows
 * (StCha / StDisCha) make it one; a PV inverter's 160 with 124 beside battery units of their own
 * (802) is no battery on the inverter's unit, and offering one would count them twice.
 */
function chainMayHoldBattery(models: readonly number[]): boolean {
  return models.some((m) => INVERTER_MODELS.has(m)) && models.includes(124) && models.includes(160);
}

/** The roles a SunSpec device's models allow, most likely first. */
export function sunspecRoles(models: readonly number[]): DeviceRole[] {
  if (models.some((m) => INVERTER_MODELS.has(m))) return ['inverter'];
  if (models.some((m) => METER_MODELS.has(m))) return ['grid-meter', 'consumption-meter'];
  if (models.some((m) => BATTERY_MODELS.has(m))) return ['battery'];
  return [];
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/**
 * The profiles written for a vendor's registers next to SunSpec (`besideSunSpec`) that a SunSpec
 * unit also matches. A device that stops answering part-way is reported by what was found before;
 * its SunSpec finding stands either way.
 */
async function besideSunSpec(
  reader: RegisterReader,
  unitId: number,
  profiles: readonly DeviceProfile[],
): Promise<NonNullable<ScanFinding['beside']>> {
  const out: NonNullable<ScanFinding['beside']> = [];
  try {
    for (const profile of profiles) {
      if (!profile.besideSunSpec || !(await matchesProfile(profile, reader, unitId))) continue;
      out.push({
        profile: profile.name,
        identity: await readIdentity(profile, reader, unitId),
        roles: rolesOf(profile),
      });
    }
  } catch {
    // a timeout or a broken link here says nothing about the SunSpec device already found
  }
  return out;
}

type UnitOutcome =
  | { found: Omit<ScanFinding, 'unitId' | 'alsoAt'> }
  | { silent: true }
  | { unknown: string }
  | { failed: ModbusError };

async function probeUnit(
  reader: RegisterReader,
  unitId: number,
  profiles: readonly DeviceProfile[],
): Promise<UnitOutcome> {
  let notSunSpec: string;
  try {
    const map = await discoverSunSpec(reader, unitId);
    const models = map.models.map((m) => m.id);
    const common = map.models.find((m) => m.id === 1);
    let identity: DeviceIdentity = {};
    if (common) {
      const c = (await readModel(reader, unitId, common)).fixed;
      identity = Object.fromEntries(
        Object.entries({ manufacturer: text(c.Mn), model: text(c.Md), serial: text(c.SN), version: text(c.Vr) }).filter(
          ([, v]) => v !== undefined,
        ),
      );
    }
    const m160 = map.models.find((m) => m.id === 160);
    const chainBattery =
      chainMayHoldBattery(models) && m160 !== undefined && hasStorageModules(await readModel(reader, unitId, m160));
    const meterSign = models.some((m) => METER_MODELS.has(m))
      ? { meterSign: vendorMeterSign(identity.manufacturer) }
      : {};
    const beside = await besideSunSpec(reader, unitId, profiles);
    return {
      found: {
        family: 'sunspec',
        profile: 'sunspec',
        identity,
        models,
        roles: sunspecRoles(models),
        ...(chainBattery ? { chainBattery: true } : {}),
        ...meterSign,
        ...(beside.length > 0 ? { beside } : {}),
      },
    };
  } catch (err) {
    if (err instanceof NoDevice) return { silent: true };
    const e = toModbusError(err);
    if (e.kind === 'timeout') return { silent: true };
    if (e.kind !== 'decode' && e.kind !== 'exception') return { failed: e };
    notSunSpec = e.message;
  }
  const matching: DeviceProfile[] = [];
  for (const profile of profiles) {
    try {
      if (await matchesProfile(profile, reader, unitId)) matching.push(profile);
    } catch (err) {
      if (err instanceof NoDevice) return { silent: true };
      const e = toModbusError(err);
      // it answered the SunSpec probe: a timeout now is a device that stopped, not an absent one
      if (e.kind !== 'decode' && e.kind !== 'exception') return { failed: e };
    }
  }
  if (matching.length === 0) return { unknown: `${notSunSpec}; no device profile matched` };
  // most specific first: the profile that checked the most registers, then the one that knows
  // the most identity registers (a serial number); the others are named as alternatives
  const known = (p: DeviceProfile) => Object.keys(p.identify.registers).length;
  matching.sort((a, b) => b.identify.match.length - a.identify.match.length || known(b) - known(a));
  const [best, ...others] = matching;
  try {
    const identity = await readIdentity(best!, reader, unitId);
    return {
      found: {
        family: 'profile',
        profile: best!.name,
        identity,
        roles: rolesOf(best!),
        alternatives: others.map((p) => p.name),
      },
    };
  } catch (err) {
    return { failed: toModbusError(err) };
  }
}

const sameDevice = (a: DeviceIdentity, b: DeviceIdentity) =>
  a.serial !== undefined && a.serial === b.serial && a.manufacturer === b.manufacturer && a.model === b.model;

/** connection failures in a row after which the link itself is taken to be down and the sweep stops */
const LINK_DOWN_AFTER = 3;

/** Sweeps the units; throws the connection error when the link cannot be opened or keeps breaking. */
export async function scanBus(reader: RegisterReader, opts: ScanOptions): Promise<ScanResult> {
  const result: ScanResult = { found: [], silent: [], unknown: [], failed: [], requests: 0, answered: [] };
  const answered = new Set<number>();
  const probe = probeReader(reader, () => result.requests++, answered);
  let linkFailures: ModbusError[] = [];
  for (const unitId of opts.units) {
    const outcome = await probeUnit(probe, unitId, opts.profiles);
    if ('failed' in outcome && outcome.failed.kind === 'connection') {
      linkFailures.push(outcome.failed);
      // the first error says why (later ones only say when the next attempt is)
      if (linkFailures.length >= LINK_DOWN_AFTER) throw linkFailures[0]!;
    } else {
      linkFailures = [];
    }
    if ('found' in outcome) {
      const twin = result.found.find(
        (f) => f.profile === outcome.found.profile && sameDevice(f.identity, outcome.found.identity),
      );
      if (twin) twin.alsoAt.push(unitId);
      else result.found.push({ unitId, alsoAt: [], ...outcome.found });
      opts.onUnit?.(unitId, 'found');
    } else if ('silent' in outcome) {
      result.silent.push(unitId);
      opts.onUnit?.(unitId, 'silent');
    } else if ('unknown' in outcome) {
      result.unknown.push({ unitId, reason: outcome.unknown });
      opts.onUnit?.(unitId, 'unknown');
    } else {
      result.failed.push({ unitId, error: outcome.failed });
      opts.onUnit?.(unitId, 'failed');
    }
  }
  result.answered = [...answered].sort((a, b) => a - b);
  return result;
}

/**
 * A sweep, then the units that gave no answer or broke off asked again, up to `retries` times: on
 * a loaded bus a unit misses one request now and then (issue 41: `setup` once missed the
 * inverter that `scan` found 5 of 5 times). A unit found in any pass counts as found.
 */
export async function scanBusAgain(reader: RegisterReader, opts: ScanOptions, retries = 2): Promise<ScanResult> {
  const result = await scanBus(reader, opts);
  for (let i = 0; i < retries; i++) {
    const again = [...result.silent, ...result.failed.map((f) => f.unitId)].sort((a, b) => a - b);
    if (again.length === 0) break;
    const r = await scanBus(reader, { ...opts, units: again });
    result.requests += r.requests;
    result.answered = [...new Set([...result.answered, ...r.answered])].sort((a, b) => a - b);
    for (const f of r.found) {
      const twin = result.found.find((x) => x.profile === f.profile && sameDevice(x.identity, f.identity));
      if (twin) twin.alsoAt.push(f.unitId, ...f.alsoAt);
      else result.found.push(f);
    }
    result.found.sort((a, b) => a.unitId - b.unitId);
    result.unknown.push(...r.unknown);
    result.silent = r.silent;
    result.failed = r.failed;
  }
  return result;
}

/**
 * Units that answered at some point of the scan but were not identified: a device that went
 * silent or broke off part-way. A site written without them would miss a device that is there.
 */
export function lostUnits(result: ScanResult): number[] {
  const known = new Set([
    ...result.found.flatMap((f) => [f.unitId, ...f.alsoAt]),
    ...result.unknown.map((u) => u.unitId),
  ]);
  return result.answered.filter((u) => !known.has(u));
}

/** '1-247', '1,2,10-12' → unit ids (sorted, unique); throws a plain message on anything else. */
export function parseUnits(spec: string, max = 247): number[] {
  const out = new Set<number>();
  for (const part of spec.split(',')) {
    const m = /^\s*(\d{1,3})\s*(?:-\s*(\d{1,3})\s*)?$/.exec(part);
    if (!m) throw new Error(`--units: '${part.trim()}' is not a unit id or a range like 1-247`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (from < 0 || to > max || from > to) throw new Error(`--units: ${part.trim()} is outside 0..${max} or backwards`);
    for (let u = from; u <= to; u++) out.add(u);
  }
  return [...out].sort((a, b) => a - b);
}
