/**
 * A device read through a YAML profile: plans the poll's reads (batch.ts), decodes, scales,
 * drops sentinels, normalises signs to docs/design.md's (positive = energy into the device) and
 * returns the role's readings with the same stream ids as the SunSpec path.
 */

import type { DeviceConfig } from '../config/types.js';
import {
  type CounterScale,
  type DeviceCounters,
  type GridState,
  type InstantValues,
  isLiveChannel,
  LIVE_CHANNEL_BY_ID,
  type Reading,
  type StatusValue,
  unknownStatus,
} from '../core/channels.js';
import type { DeviceIdentity } from '../core/identity.js';
import type { RegisterReader } from '../core/register-reader.js';
import { ownStreamId, ROLES } from '../core/roles.js';
import { streamIds } from '../core/streams.js';
import { ModbusError } from '../modbus/errors.js';
import { planReads } from './batch.js';
import { type CompiledRole, type CompiledSource, type DeviceProfile, INSTANT_KEYS, type ValueRef } from './compiled.js';
import { counterScale } from './counter-scale.js';
import type { DeviceDriver, DevicePoll } from './driver.js';
import { readIdentity } from './identify.js';
import { isException, RegisterCache, readRange } from './registers.js';

/** an optional register the device refused is asked for again after this long (a firmware update may add it) */
const REFUSED_RETRY_MS = 3_600_000;

/** SunSpec bounds a scale factor to -10..10; anything else is a misread register. */
const MAX_SF = 10;

function refsOf(role: CompiledRole): ValueRef[] {
  const out: ValueRef[] = [];
  const addSource = (s: CompiledSource | undefined) => {
    if (!s) return;
    out.push(...s.parts, ...(s.minus ?? []));
    if (s.scaleFactor) out.push(s.scaleFactor);
    if (s.signFrom) out.push(s.signFrom.ref);
    addSource(s.otherwise);
  };
  for (const k of INSTANT_KEYS) addSource(role.instant[k]);
  addSource(role.inWh);
  addSource(role.outWh);
  addSource(role.capacityWh);
  addSource(role.pv?.power_W);
  addSource(role.pv?.outWh);
  for (const st of role.pv?.strings ?? []) {
    addSource(st.voltage);
    addSource(st.current);
    addSource(st.power);
  }
  if (role.pv?.stringCount) out.push(role.pv.stringCount);
  if (role.status) out.push(role.status.ref);
  for (const rule of role.state?.rules ?? []) out.push(...rule.refs);
  return out;
}

/** v × f without the binary noise of multiplying by 0.1 (1234 × 0.1 → 123.4, not 123.40000000000001) */
function scaled(v: number, f: number): number {
  const inverse = 1 / f;
  return f < 1 && Number.isInteger(inverse) ? v / inverse : v * f;
}

export class ProfileDevice implements DeviceDriver {
  identity: DeviceIdentity = {};
  private readonly role: CompiledRole;
  private readonly refs: ValueRef[];
  private readonly cache = new RegisterCache();
  private readonly readAt = new Map<ValueRef, number>();
  /** optional registers the device refused, and when to ask again */
  private readonly refusedUntil = new Map<ValueRef, number>();
  private identified = false;

  constructor(
    readonly config: DeviceConfig,
    readonly profile: DeviceProfile,
  ) {
    const role = profile.roles[config.role];
    if (!role) throw new Error(`device ${config.id}: profile ${profile.name} has no ${config.role} section`);
    this.role = role;
    this.refs = refsOf(role);
  }

  reset(): void {
    this.cache.clear();
    this.readAt.clear();
    this.refusedUntil.clear();
    this.identified = false;
  }

  async poll(reader: RegisterReader, now: () => number): Promise<DevicePoll> {
    const unit = this.config.connection.unitId;
    if (!this.identified) {
      this.identity = await readIdentity(this.profile, reader, unit);
      this.identified = true;
    }
    const started = now();
    const due = this.refs.filter((r) => {
      const last = this.readAt.get(r);
      const refusedUntil = this.refusedUntil.get(r);
      if (refusedUntil !== undefined && started < refusedUntil) return false;
      return last === undefined || r.intervalMs === 0 || started - last >= r.intervalMs;
    });
    const asRange = (r: ValueRef) => ({ fn: r.fn, address: r.address, count: r.count, optional: r.optional });
    for (const req of planReads(due.map(asRange), this.profile.batching)) {
      try {
        this.cache.store(req, await readRange(reader, unit, req, `profile ${this.profile.name}`));
      } catch (err) {
        if (!req.optional || !isException(err)) throw err;
        // forget only what was refused: a merged optional request may span a required register
        // read in this poll (a live voltage range across an inverter's power), which stays
        // one refused register must not cost the others of the batch: ask each alone, and leave
        // the refused ones out for a while (firmware that lacks them lacks them on every poll)
        const inside = due.filter(
          (r) =>
            r.optional && r.fn === req.fn && r.address >= req.address && r.address + r.count <= req.address + req.count,
        );
        for (const r of inside) {
          try {
            this.cache.store(
              asRange(r),
              await readRange(reader, unit, asRange(r), `profile ${this.profile.name}, ${r.label}`),
            );
          } catch (e) {
            if (!isException(e)) throw e;
            this.cache.forget(asRange(r));
            this.refusedUntil.set(r, started + REFUSED_RETRY_MS);
          }
        }
      }
    }
    for (const r of due) this.readAt.set(r, started);
    return this.readings(now());
  }

  private decodeError(s: CompiledSource, what: string): ModbusError {
    return new ModbusError('decode', `profile ${this.profile.name}, ${s.label}: ${what}`);
  }

  /** A source's value in spec units and signs, else its `otherwise`'s; undefined when neither has every register it needs. */
  private value(s: CompiledSource | undefined): number | undefined {
    if (!s) return undefined;
    return this.own(s) ?? this.value(s.otherwise);
  }

  private own(s: CompiledSource): number | undefined {
    let sum = 0;
    for (const p of s.parts) {
      const v = this.cache.number(p);
      if (v === undefined) return undefined;
      sum += v;
    }
    for (const p of s.minus ?? []) {
      const v = this.cache.number(p);
      if (v === undefined) return undefined;
      sum -= v;
    }
    let v = scaled(sum, s.factor);
    if (s.scaleFactor) {
      const sf = this.cache.number(s.scaleFactor);
      if (sf === undefined) return undefined;
      if (!Number.isInteger(sf) || Math.abs(sf) > MAX_SF)
        throw this.decodeError(s, `scale factor ${s.scaleFactor.label} reads ${sf}, outside -${MAX_SF}..${MAX_SF}`);
      v = sf < 0 ? v / 10 ** -sf : v * 10 ** sf;
    }
    // rounded to 1e-9 so 125.6 − 100 reads 25.6, not 25.599999999999994
    if (s.offset) v = Math.round((v + s.offset) * 1e9) / 1e9;
    if (s.absolute) v = Math.abs(v);
    if (s.signFrom) {
      const status = this.cache.number(s.signFrom.ref);
      // without the status the direction is unknown, and a wrong sign is worse than no value
      if (status === undefined) return undefined;
      v = (status & s.signFrom.mask) !== 0 ? -Math.abs(v) : Math.abs(v);
    }
    v *= s.sign;
    return v === 0 ? 0 : v;
  }

  private percent(s: CompiledSource | undefined, name: string): number | undefined {
    const v = this.value(s);
    if (v !== undefined && (v < 0 || v > 100))
      throw this.decodeError(s!, `${name} ${v} % is outside 0..100; the scale in the profile is probably wrong`);
    return v;
  }

  /** Lifetime counters are magnitudes; a negative one is a device glitch, left out rather than stored. */
  private counter(s: CompiledSource | undefined): number | undefined {
    const v = this.value(s);
    return v !== undefined && v >= 0 ? v : undefined;
  }

  private counters(inSrc: CompiledSource | undefined, outSrc: CompiledSource | undefined): DeviceCounters | undefined {
    const inWh = this.counter(inSrc);
    const outWh = this.counter(outSrc);
    if (inWh === undefined && outWh === undefined) return undefined;
    const inScale = inWh !== undefined ? this.scaleOf(inSrc, inWh) : undefined;
    const outScale = outWh !== undefined ? this.scaleOf(outSrc, outWh) : undefined;
    return {
      ...(inWh !== undefined ? { inWh, ...(inScale ? { inScale } : {}) } : {}),
      ...(outWh !== undefined ? { outWh, ...(outScale ? { outScale } : {}) } : {}),
    };
  }

  /**
   * The wrap point and resolution of the register a counter was read from (the source that gave
   * the value, `otherwise` included); a sum of registers, or a sign applied, wraps nowhere clean.
   */
  private scaleOf(s: CompiledSource | undefined, v: number): CounterScale | undefined {
    if (!s) return undefined;
    if (this.own(s) === undefined) return this.scaleOf(s.otherwise, v);
    const sf = s.scaleFactor ? this.cache.number(s.scaleFactor) : 0;
    const factor = s.factor * 10 ** (sf ?? 0);
    const part = s.parts[0];
    if (!part || s.parts.length > 1 || s.absolute || s.signFrom) return { wrapWh: Infinity, stepWh: Math.abs(factor) };
    return counterScale(part.type, factor, v);
  }

  private gridState(): GridState | undefined {
    const spec = this.role.state;
    if (!spec) return undefined;
    for (const rule of spec.rules) {
      const values = rule.refs.map((r) => this.cache.number(r));
      if (values.some((v) => v === undefined)) continue;
      const all = (test: (v: number) => boolean) => (values as number[]).every(test);
      if (rule.in && all((v) => rule.in!.has(v))) return rule.state;
      if (rule.anyBits !== undefined && all((v) => (v & rule.anyBits!) !== 0)) return rule.state;
      if (rule.below !== undefined && all((v) => v * rule.scale < rule.below!)) return rule.state;
    }
    return spec.otherwise;
  }

  /** The status the table gives the code, `unknown (code N)` for one it lacks; absent without a reading. */
  private status(): StatusValue | undefined {
    const spec = this.role.status;
    const code = spec && this.cache.number(spec.ref);
    if (code === undefined) return undefined;
    return spec!.states.get(code) ?? unknownStatus(code);
  }

  /**
   * The inverter's PV strings as its PV module streams (numbered from 1, as SunSpec 160's modules
   * are): voltage, current (a magnitude) and power with design.md's PV sign, V × I where the
   * device gives no power of the string. A string whose registers read not-available this poll
   * has no values; the count reaches the last string that answered, so strings a model lacks
   * (read as not-available) are never listed.
   */
  private pvStrings(id: string, ts: number): { readings: Reading[]; count: number } {
    const n = this.role.pv?.stringCount && this.cache.number(this.role.pv.stringCount);
    // the device says how many strings it has: the registers of the others mean nothing
    const limit = n !== undefined && Number.isInteger(n) && n >= 0 ? n : undefined;
    const strings = (this.role.pv?.strings ?? []).slice(0, limit);
    const readings: Reading[] = [];
    let answered = 0;
    strings.forEach((st, i) => {
      const v = this.value(st.voltage);
      const a = this.value(st.current);
      const current = a === undefined ? undefined : Math.abs(a) + 0;
      // DC power is V × I: producing, so negative (design.md's PV sign)
      const derived = v !== undefined && current !== undefined ? -Math.round(v * current * 100) / 100 + 0 : undefined;
      const power = st.power ? this.value(st.power) : derived;
      const values: InstantValues = {};
      if (power !== undefined) values.power_W = power;
      if (v !== undefined) values.voltage_DC_V = v;
      if (current !== undefined) values.current_DC_A = current;
      if (Object.keys(values).length > 0) answered = i + 1;
      readings.push({ streamId: streamIds.pvModule(id, i + 1), ts, values });
    });
    return { readings: readings.slice(0, answered), count: answered };
  }

  private instant(): InstantValues {
    const out: InstantValues = {};
    for (const k of INSTANT_KEYS) {
      const v = k === 'soc' || k === 'soh' ? this.percent(this.role.instant[k], k) : this.value(this.role.instant[k]);
      // a current is a magnitude, whichever way a vendor signs it: the power's sign says the direction
      if (v !== undefined)
        out[k] = isLiveChannel(k) && LIVE_CHANNEL_BY_ID[k].quantity === 'current' ? Math.abs(v) + 0 : v;
    }
    const state = this.gridState();
    if (state !== undefined) out.state = state;
    const status = this.status();
    if (status !== undefined) out.status = status;
    return out;
  }

  private readings(ts: number): DevicePoll {
    const { id, role } = this.config;
    const counters = this.counters(this.role.inWh, this.role.outWh);
    const values = this.instant();
    const readings: Reading[] = [{ streamId: ownStreamId(role, id), ts, values, ...(counters ? { counters } : {}) }];
    // the schema gives `pv` to the inverter section only, `capacityWh` to the battery's
    const pv = this.role.pv;
    const pvStream = ROLES[role].streams.find((st) => st.role === 'pv');
    if (pv && pvStream) {
      const power = this.value(pv.power_W);
      const pvCounters = this.counters(undefined, pv.outWh);
      readings.push({
        streamId: pvStream.id(id, 0),
        ts,
        values: power !== undefined ? { power_W: power } : {},
        ...(pvCounters ? { counters: pvCounters } : {}),
      });
    }
    const strings = pv && pvStream ? this.pvStrings(id, ts) : undefined;
    if (strings) readings.push(...strings.readings);
    const capacityWh = this.value(this.role.capacityWh);
    return {
      readings,
      ...(strings && strings.count > 0 ? { pvModules: strings.count } : {}),
      ...(capacityWh !== undefined && capacityWh > 0 ? { capacityWh } : {}),
    };
  }
}
