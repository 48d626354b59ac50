/**
 * A schema-valid `limit:` section → the engine's CompiledLimit, checking what the schema cannot:
 * raw values that fit their type, a rating wherever a register counts percent, a fallback register
 * exactly where the device reverts to values, seconds wherever the revert has a time, and no
 * register written twice. Findings carry their path so the loader names the line.
 */
import type { LimitRevert } from '../core/active-power-limit.js';
import { type Order, typeRange } from '../modbus/codec.js';
import type { PathSegment } from '../yaml/errors.js';
import type { Finding } from '../yaml/messages.js';
import { type ControlType, pduOf, registerLabel } from './control-compile.js';
import { LIMIT_MODES } from './limit-schema.js';
import type { LimitMapSpec, ProfileFile } from './profile-types.js';

export type LimitMode = (typeof LIMIT_MODES)[number];
export type LimitUnit = 'W' | 'percent';

/** one register of a limit map, resolved: PDU address, type, word order, and its label for messages */
export interface LimitRegister {
  address: number;
  type: ControlType;
  order: Order;
  label: string;
}

export interface CompiledLimitMap {
  mode: LimitMode;
  /** raw = value (W or percent) × scale, clamped to [0, max] (or the type's range) */
  setpoint: LimitRegister & { unit: LimitUnit; scale: number; max?: number; none?: number; readBack?: number };
  /** fixed values the document sets before a limit (a limit mode register) */
  before: (LimitRegister & { value: number })[];
  /** with `mask`, a u16 of flags of which the switch owns only those bits */
  enable?: LimitRegister & { on: number; off?: number; mask?: number };
  commit?: LimitRegister & { value: number };
  timeout?: LimitRegister & { unit: 's' | 'min' };
  fallback?: LimitRegister & { unit: LimitUnit; scale: number };
  /** as the contract has it; an unknown revert is a keep-alive (the gateway re-asserts) with `revertKnown` false */
  revert: LimitRevert;
  revertKnown: boolean;
  /** where the document says what the device does once the gateway is gone */
  says?: string;
}

export interface CompiledLimit {
  source: { title: string; version: string; url: string };
  unitId?: number;
  rating?: LimitRegister & { fn: 'holding' | 'input'; scale: number };
  maps: Partial<Record<LimitMode, CompiledLimitMap>>;
}

type Path = PathSegment[];
type Problem = (at: Path, message: string, hint: string) => void;
type RegisterSpec = { address: number; type: string; label?: string; function?: 'holding' | 'input' };

/** Compiles `file.limit`; every problem is pushed to `findings`. */
export function compileLimit(file: ProfileFile, findings: Finding[]): CompiledLimit | undefined {
  const spec = file.limit;
  if (!spec) return undefined;
  const problem: Problem = (at, message, hint) => findings.push({ segments: at, anchor: at, message, hint });
  const before = findings.length;
  const register = (r: RegisterSpec, at: Path): LimitRegister | undefined => resolve(file, r, at, problem);
  const rating = spec.rating && register(spec.rating, ['limit', 'rating']);
  const maps: CompiledLimit['maps'] = {};
  if (!LIMIT_MODES.some((m) => spec[m]))
    problem(
      ['limit'],
      'the limit map has neither output nor device-export-limit',
      'add output: (the inverter’s AC output limit) or device-export-limit: (its own export limiter)',
    );
  for (const mode of LIMIT_MODES) {
    const m = spec[mode];
    if (!m) continue;
    const compiled = compileMap(mode, m, ['limit', mode], register, problem);
    if (compiled?.setpoint.unit === 'percent' || compiled?.fallback?.unit === 'percent')
      if (!spec.rating)
        problem(
          ['limit', mode, 'setpoint', 'unit'],
          'a limit in percent needs the rating it is a percent of',
          'add limit.rating: the register of the rated AC output (address, type, scale to W)',
        );
    if (compiled) maps[mode] = compiled;
  }
  if (findings.length > before) return undefined;
  return {
    source: { title: spec.source.title, version: spec.source.version, url: spec.source.url },
    ...(spec.unitId !== undefined ? { unitId: spec.unitId } : {}),
    ...(rating && spec.rating
      ? { rating: { ...rating, fn: spec.rating.function ?? 'holding', scale: spec.rating.scale ?? 1 } }
      : {}),
    maps,
  };
}

function compileMap(
  mode: LimitMode,
  m: LimitMapSpec,
  at: Path,
  register: (r: RegisterSpec, at: Path) => LimitRegister | undefined,
  problem: Problem,
): CompiledLimitMap | undefined {
  const fits = (r: LimitRegister, raw: number, where: Path): boolean => {
    const [lo, hi] = typeRange(r.type);
    const ok = r.type === 'f32' ? Number.isFinite(raw) : Number.isInteger(raw) && raw >= lo && raw <= hi;
    if (!ok)
      problem(
        where,
        `${raw} is not a ${r.type} value`,
        `give ${r.type === 'f32' ? 'a number' : `an integer in ${lo}..${hi}`}`,
      );
    return ok;
  };
  const sp = register(m.setpoint, [...at, 'setpoint']);
  const enable = m.enable && register(m.enable, [...at, 'enable']);
  const commit = m.commit && register(m.commit, [...at, 'commit']);
  const timeout = m.timeout && register(m.timeout, [...at, 'timeout']);
  const fallback = m.fallback && register(m.fallback, [...at, 'fallback']);
  const before = (m.before ?? []).map((w, i) => register(w, [...at, 'before', i]));
  if (
    !sp ||
    (m.enable && !enable) ||
    (m.commit && !commit) ||
    (m.timeout && !timeout) ||
    (m.fallback && !fallback) ||
    before.some((b) => b === undefined)
  )
    return undefined;
  let ok = true;
  before.forEach((b, i) => {
    ok = fits(b!, m.before![i]!.value, [...at, 'before', i, 'value']) && ok;
  });
  if (m.enable?.mask !== undefined && enable) {
    if (enable.type !== 'u16') {
      problem(
        [...at, 'enable', 'mask'],
        `a mask on a ${enable.type}`,
        'a mask is for a u16 of flags: make the type u16',
      );
      ok = false;
    }
    for (const key of ['on', 'off'] as const) {
      const v = m.enable[key];
      if (v !== undefined && (v & ~m.enable.mask) !== 0) {
        problem(
          [...at, 'enable', key],
          `${key} ${v} sets bits outside the mask ${m.enable.mask}`,
          'give on and off within the bits of mask',
        );
        ok = false;
      }
    }
  }
  if (m.setpoint.max !== undefined) ok = fits(sp, m.setpoint.max, [...at, 'setpoint', 'max']) && ok;
  if (m.setpoint.none !== undefined) ok = fits(sp, m.setpoint.none, [...at, 'setpoint', 'none']) && ok;
  if (enable && m.enable) {
    ok = fits(enable, m.enable.on, [...at, 'enable', 'on']) && ok;
    if (m.enable.off !== undefined) ok = fits(enable, m.enable.off, [...at, 'enable', 'off']) && ok;
  }
  if (commit && m.commit) ok = fits(commit, m.commit.value, [...at, 'commit', 'value']) && ok;
  const addresses = [...before, sp, enable, commit, timeout, fallback].filter(
    (r): r is LimitRegister => r !== undefined,
  );
  const seen = new Set<number>();
  for (const r of addresses) {
    if (seen.has(r.address)) {
      problem(at, `${r.label} is named twice in the ${mode} map`, 'give each register one job');
      ok = false;
    }
    seen.add(r.address);
  }
  const rv = m.revert;
  const timed = rv.kind === 'revert-values' || rv.kind === 'revert-unlimited' || rv.kind === 'keep-alive';
  if ((timed || rv.kind === 'unknown') && rv.seconds === undefined) {
    problem(
      [...at, 'revert'],
      `a ${rv.kind} revert needs seconds`,
      rv.kind === 'unknown'
        ? 'give seconds: how often the gateway re-asserts the limit (e.g. 60)'
        : 'give seconds: the revert time the document gives',
    );
    ok = false;
  }
  if (rv.kind === 'revert-values' && !fallback) {
    problem(
      [...at, 'revert', 'kind'],
      'revert-values needs the fallback register the device falls back to',
      'add fallback: { address, type, unit } from the document, or use the kind the document gives',
    );
    ok = false;
  }
  if (fallback && rv.kind !== 'revert-values') {
    problem(
      [...at, 'fallback'],
      `a fallback register with revert kind ${rv.kind}`,
      'a device that keeps a fallback value reverts to it: make revert.kind revert-values',
    );
    ok = false;
  }
  if (timeout && m.timeout && rv.seconds !== undefined) {
    const raw = m.timeout.unit === 'min' ? rv.seconds / 60 : rv.seconds;
    ok = fits(timeout, raw, [...at, 'revert', 'seconds']) && ok;
  }
  if (!ok) return undefined;
  const seconds = rv.seconds ?? 0;
  const revert: LimitRevert =
    rv.kind === 'none' ? { kind: 'none' } : { kind: rv.kind === 'unknown' ? 'keep-alive' : rv.kind, seconds };
  return {
    mode,
    setpoint: {
      ...sp,
      unit: m.setpoint.unit as LimitUnit,
      scale: m.setpoint.scale ?? 1,
      ...(m.setpoint.max !== undefined ? { max: m.setpoint.max } : {}),
      ...(m.setpoint.none !== undefined ? { none: m.setpoint.none } : {}),
      ...(m.setpoint.readBack !== undefined
        ? { readBack: m.setpoint.readBack + (sp.address - m.setpoint.address) }
        : {}),
    },
    before: before.map((b, i) => ({ ...b!, value: m.before![i]!.value })),
    ...(enable && m.enable
      ? {
          enable: {
            ...enable,
            on: m.enable.on,
            ...(m.enable.off !== undefined ? { off: m.enable.off } : {}),
            ...(m.enable.mask !== undefined ? { mask: m.enable.mask } : {}),
          },
        }
      : {}),
    ...(commit && m.commit ? { commit: { ...commit, value: m.commit.value } } : {}),
    ...(timeout && m.timeout ? { timeout: { ...timeout, unit: m.timeout.unit as 's' | 'min' } } : {}),
    ...(fallback && m.fallback
      ? { fallback: { ...fallback, unit: m.fallback.unit as LimitUnit, scale: m.fallback.scale ?? 1 } }
      : {}),
    revert,
    revertKnown: rv.kind !== 'unknown',
    ...(rv.says ? { says: rv.says } : {}),
  };
}

function resolve(file: ProfileFile, r: RegisterSpec, at: Path, problem: Problem): LimitRegister | undefined {
  const type = r.type as ControlType;
  const address = pduOf(file, r.address, type, at, problem);
  if (address === undefined) return undefined;
  return {
    address,
    type,
    order: { wordOrder: file.defaults?.wordOrder ?? 'big', byteOrder: file.defaults?.byteOrder ?? 'big' },
    label: registerLabel(r.function ?? 'holding', r.address, r.label),
  };
}
