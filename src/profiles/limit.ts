/**
 * A profile's `limit:` map as the active-power-limit capability (src/core/active-power-limit.ts):
 * the revert time, the setpoint, then the enable switch, each compared with what the device holds
 * first and written only when it differs (these registers often sit in flash), read back, and a
 * commit write after any change where the document asks for one. A write the device does not
 * keep stops the sequence there: the enable must never switch on a setpoint the device refused.
 * docs/device-profiles.md "Limit maps (`limit:`)", docs/limits-vendors.md.
 */
import type { ActivePowerLimit, PowerLimitCommand } from '../core/active-power-limit.js';
import type { RegisterReader } from '../core/register-reader.js';
import type { RegisterWrite, RegisterWriter } from '../core/storage-control.js';
import { decodeNumber, encodeNumber, typeRange } from '../modbus/codec.js';
import type { DeviceProfile } from './compiled.js';
import type { CompiledLimit, CompiledLimitMap, LimitMode, LimitRegister, LimitUnit } from './limit-compile.js';
import { readRange } from './registers.js';

export type LimitMapErrorCode = 'LIMIT_WATTS_INVALID' | 'LIMIT_RATING_UNKNOWN' | 'LIMIT_RATING_INVALID';

/** A limit the map cannot put on the device; nothing was written. */
export class LimitMapError extends Error {
  constructor(
    readonly code: LimitMapErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'LimitMapError';
  }
}

/** ActivePowerLimit plus what the profile knows beyond the contract (all additions, none required by it). */
export interface ProfileActivePowerLimit extends ActivePowerLimit {
  readonly unitId: number;
  /** `output`: the inverter's AC output; `device-export-limit`: the export at the device's own meter */
  readonly mode: LimitMode;
  /** false when no source says what the device does once the gateway is gone (`revert` is then a keep-alive) */
  readonly revertKnown: boolean;
  /** where the document says it */
  readonly says?: string;
  readonly source: CompiledLimit['source'];
}

function same(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

type Step = {
  reg: LimitRegister;
  raw: number;
  readAt?: number;
  refresh?: boolean;
  commit?: boolean;
  /** the bits of a u16 this write owns; the others are written back as read */
  mask?: number;
};

/** The limit of kind `mode` of a device read through `profile` at `unitId`; undefined when the profile has none. */
export function createProfileLimit(
  profile: DeviceProfile,
  unitId: number,
  mode: LimitMode = 'output',
): ProfileActivePowerLimit | undefined {
  const limit = profile.limit;
  const map = limit?.maps[mode];
  if (!limit || !map) return undefined;
  const unit = limit.unitId ?? unitId;
  const what = `profile ${profile.name} limit ${mode}`;
  const sp = map.setpoint;
  // a timer the device restarts on each write of the setpoint: the setpoint is written every time
  const refresh = map.timeout !== undefined || (map.revertKnown && map.revert.kind === 'keep-alive');
  let rated: number | undefined;

  const ratedW = async (bus: RegisterReader): Promise<number> => {
    if (rated !== undefined) return rated;
    const r = limit.rating;
    if (!r)
      throw new LimitMapError('LIMIT_RATING_UNKNOWN', `${what}: the profile names no rating register (limit.rating)`);
    const width = encodeNumber(r.type, 0, r.order).length;
    const words = await readRange(bus, unit, { fn: r.fn, address: r.address, count: width }, `${what}, ${r.label}`);
    const w = decodeNumber(r.type, words, 0, r.order) * r.scale;
    if (!(Number.isFinite(w) && w > 0))
      throw new LimitMapError('LIMIT_RATING_INVALID', `${what}: ${r.label} reads ${w} W, not a rating`);
    rated = w;
    return w;
  };

  /** the raw value for `watts` in a register counting W or percent × scale, never above what was asked */
  const rawOf = async (
    bus: RegisterReader,
    reg: LimitRegister & { unit: LimitUnit; scale: number; max?: number },
    watts: number,
  ) => {
    const value = reg.unit === 'W' ? watts : Math.min(100, (watts / (await ratedW(bus))) * 100);
    const [lo, hi] = typeRange(reg.type);
    let raw = value * reg.scale;
    // rounded down (a hair of float error aside): the device may hold less than asked, never more
    if (reg.type !== 'f32') raw = Math.floor(raw + 1e-9);
    return Math.min(reg.max ?? hi, hi, Math.max(lo, 0, raw));
  };

  const run = async (bus: RegisterReader & RegisterWriter, steps: Step[]): Promise<RegisterWrite[]> => {
    const out: RegisterWrite[] = [];
    for (const s of steps) {
      if (s.commit && out.length === 0) continue;
      const count = encodeNumber(s.reg.type, 0, s.reg.order).length;
      const read = () =>
        readRange(bus, unit, { fn: 'holding', address: s.readAt ?? s.reg.address, count }, `${what}, ${s.reg.label}`);
      const now = s.commit ? undefined : await read();
      const raw = s.mask === undefined || !now ? s.raw : (now[0]! & ~s.mask) | (s.raw & s.mask);
      const values = encodeNumber(s.reg.type, raw, s.reg.order);
      if (now && !s.refresh && same(now, values)) continue;
      await bus.writeHolding(unit, s.reg.address, values);
      const readBack = await read();
      out.push({ address: s.reg.address, values, readBack });
      if (!s.commit && !same(readBack, values)) break;
    }
    return out;
  };

  const timeoutStep = (): Step[] => {
    const t = map.timeout;
    if (!t || map.revert.kind === 'none') return [];
    return [{ reg: t, raw: t.unit === 'min' ? map.revert.seconds / 60 : map.revert.seconds }];
  };
  const commitStep = (): Step[] => (map.commit ? [{ reg: map.commit, raw: map.commit.value, commit: true }] : []);
  const setpointStep = (raw: number): Step => ({
    reg: sp,
    raw,
    ...(sp.readBack !== undefined ? { readAt: sp.readBack } : {}),
    refresh,
  });

  const enableStep = (raw: number): Step => {
    const e = map.enable!;
    return { reg: e, raw, ...(e.mask !== undefined ? { mask: e.mask } : {}) };
  };

  const steps = async (bus: RegisterReader, command: PowerLimitCommand): Promise<Step[]> => {
    if (command.kind === 'limit') {
      const raw = await rawOf(bus, sp, command.watts);
      const on: Step[] = map.enable ? [enableStep(map.enable.on)] : [];
      const before: Step[] = map.before.map((b) => ({ reg: b, raw: b.value }));
      return [...timeoutStep(), ...before, setpointStep(raw), ...on, ...commitStep()];
    }
    if (map.enable?.off !== undefined) return [enableStep(map.enable.off), ...commitStep()];
    const raw = sp.none ?? (sp.unit === 'percent' ? Math.min(100 * sp.scale, typeRange(sp.type)[1]) : undefined);
    return [setpointStep(raw ?? (await rawOf(bus, sp, await ratedW(bus)))), ...commitStep()];
  };

  const fallback = map.fallback;
  return {
    unitId: unit,
    mode,
    holds: mode === 'device-export-limit' ? 'export' : 'output',
    revert: map.revert,
    revertKnown: map.revertKnown,
    ...(map.says ? { says: map.says } : {}),
    source: limit.source,
    ratedW,
    async apply(bus, command) {
      if (command.kind === 'limit' && !(Number.isFinite(command.watts) && command.watts >= 0))
        throw new LimitMapError(
          'LIMIT_WATTS_INVALID',
          `${what}: watts must be a finite number ≥ 0, got ${command.watts}`,
        );
      return run(bus, await steps(bus, command));
    },
    ...(fallback
      ? {
          async setFailSafe(bus: RegisterReader & RegisterWriter, watts: number) {
            if (!(Number.isFinite(watts) && watts >= 0))
              throw new LimitMapError('LIMIT_WATTS_INVALID', `${what}: fail-safe watts must be ≥ 0, got ${watts}`);
            return run(bus, [{ reg: fallback, raw: await rawOf(bus, fallback, watts) }]);
          },
        }
      : {}),
  };
}

/** The kinds of limit a profile offers, in the contract's order. */
export function limitModesOf(profile: DeviceProfile): LimitMode[] {
  const maps = profile.limit?.maps ?? {};
  return (['output', 'device-export-limit'] as const).filter((m) => maps[m] !== undefined);
}

/**
 * What a device of this profile does with a limit once the gateway is gone, in one line for
 * check-config and the docs; undefined when it keeps it or falls back to a value the gateway wrote.
 */
export function revertWarning(map: Pick<CompiledLimitMap, 'revert' | 'revertKnown'>): string | undefined {
  if (!map.revertKnown) return 'no source says what it does with the limit once the gateway is gone';
  if (map.revert.kind === 'revert-unlimited')
    return `it drops the limit ${map.revert.seconds} s after the gateway is gone (reverts to unlimited)`;
  if (map.revert.kind === 'keep-alive')
    return `it drops the limit unless the gateway rewrites it within ${map.revert.seconds} s`;
  return undefined;
}
