/**
 * A schema-valid `control:` section → the engine's CompiledControl, checking what the schema
 * cannot: one of value, power or lifetime per write, raw values that fit their type, power only
 * where a command carries one, a register written once per mode, and, for a device that ends a
 * command by its own timer, a write in every command that (re)starts that timer. Findings carry
 * their path so the loader names the line.
 */
import type { StorageCommand } from '../core/storage-control.js';
import { type Order, TYPE_WIDTH, typeRange } from '../modbus/codec.js';
import type { PathSegment } from '../yaml/errors.js';
import type { Finding } from '../yaml/messages.js';
import type { CONTROL_TYPES } from './control-schema.js';
import { CONTROL_MODES } from './control-schema.js';
import type { ControlSpec, ControlWriteSpec, ProfileFile } from './profile-types.js';

export type StorageMode = StorageCommand['mode'];
export type ControlType = (typeof CONTROL_TYPES)[number];

export type WriteValue =
  | { kind: 'fixed'; raw: number }
  | { kind: 'power'; scale: number; sign: 1 | -1; max?: number }
  | { kind: 'lifetime'; unit: 's' | 'min' };

export interface CompiledControlWrite {
  /** PDU address */
  address: number;
  type: ControlType;
  order: Order;
  value: WriteValue;
  /** written on every command of its mode: the write (re)starts the device's timer */
  refresh: boolean;
  /** for messages and the audit: the document's address and name */
  label: string;
}

export interface CompiledControl {
  source: { title: string; version: string; url: string };
  /** the unit the control registers answer on, when not the device's own */
  unitId?: number;
  life: { kind: 'revert-timer' | 'keep-alive'; seconds: number };
  /** the device returns to its own logic by itself when the gateway goes quiet */
  fallsBack: boolean;
  /** what charge and discharge powerW is on the device: the battery's, or a grid setpoint (Victron) */
  power: 'battery' | 'grid-setpoint';
  modes: Partial<Record<StorageMode, CompiledControlWrite[]>>;
}

const POWER_MODES: ReadonlySet<StorageMode> = new Set(['charge', 'discharge']);

type Path = PathSegment[];

/** Compiles `file.control`; every problem is pushed to `findings`. */
export function compileControl(file: ProfileFile, findings: Finding[]): CompiledControl | undefined {
  const spec = file.control;
  if (!spec) return undefined;
  const problem = (at: Path, message: string, hint: string) =>
    findings.push({ segments: at, anchor: at, message, hint });
  const before = findings.length;
  const modes: CompiledControl['modes'] = {};
  for (const mode of CONTROL_MODES) {
    const list = spec.modes[mode];
    if (!list) continue;
    const at: Path = ['control', 'modes', mode];
    const seen = new Set<number>();
    const out: CompiledControlWrite[] = [];
    list.forEach((w, i) => {
      const c = compileWrite(file, spec, mode, w, [...at, i], problem);
      if (!c) return;
      if (seen.has(c.address))
        problem(
          [...at, i, 'address'],
          `register ${w.address} is written twice in ${mode}`,
          'write each register once per mode',
        );
      seen.add(c.address);
      out.push(c);
    });
    if (POWER_MODES.has(mode) && !list.some((w) => w.power !== undefined))
      problem(
        at,
        `${mode} writes no register from the commanded power`,
        'add the power register with power: { scale: 1 }',
      );
    if (spec.life.kind === 'revert-timer' && mode !== 'self-consumption' && !list.some((w) => w.refresh === true))
      problem(
        at,
        `${mode} has no write that starts the device's revert timer`,
        'mark the write that (re)starts the timer with refresh: true, or make life.kind keep-alive',
      );
    modes[mode] = out;
  }
  if (findings.length > before) return undefined;
  return {
    source: { title: spec.source.title, version: spec.source.version, url: spec.source.url },
    ...(spec.unitId !== undefined ? { unitId: spec.unitId } : {}),
    life: { kind: spec.life.kind, seconds: spec.life.seconds },
    fallsBack: spec.life.fallsBack,
    power: spec.power ?? 'battery',
    modes,
  };
}

/** the modes a control map offers, in the order of the contract */
export function modesOf(c: CompiledControl): StorageMode[] {
  return CONTROL_MODES.filter((m) => c.modes[m] !== undefined);
}

function compileWrite(
  file: ProfileFile,
  spec: ControlSpec,
  mode: StorageMode,
  w: ControlWriteSpec,
  at: Path,
  problem: (at: Path, message: string, hint: string) => void,
): CompiledControlWrite | undefined {
  const given = [w.value, w.power, w.lifetime].filter((x) => x !== undefined).length;
  if (given !== 1) {
    problem(
      at,
      given === 0 ? 'the write has no value' : 'the write has more than one of value, power and lifetime',
      'give exactly one of value (a raw number), power (from the command) or lifetime (the command life)',
    );
    return undefined;
  }
  const type = w.type as ControlType;
  const pdu = pduOf(file, w.address, type, at, problem);
  if (pdu === undefined) return undefined;
  const [lo, hi] = typeRange(type);
  const fits = (raw: number) =>
    type === 'f32' ? Number.isFinite(raw) : Number.isInteger(raw) && raw >= lo && raw <= hi;
  let value: WriteValue;
  if (w.value !== undefined) {
    if (!fits(w.value)) {
      problem(
        [...at, 'value'],
        `${w.value} is not a ${type} value`,
        `give ${type === 'f32' ? 'a number' : `an integer in ${lo}..${hi}`}`,
      );
      return undefined;
    }
    value = { kind: 'fixed', raw: w.value };
  } else if (w.power !== undefined) {
    if (!POWER_MODES.has(mode)) {
      problem(
        [...at, 'power'],
        `${mode} carries no power`,
        'use value: for this mode; power belongs to charge and discharge',
      );
      return undefined;
    }
    const p = w.power;
    if (p.max !== undefined && !fits(p.max)) {
      problem([...at, 'power', 'max'], `${p.max} is not a ${type} value`, `give at most ${hi}`);
      return undefined;
    }
    value = {
      kind: 'power',
      scale: p.scale ?? 1,
      sign: (p.sign ?? 1) as 1 | -1,
      ...(p.max !== undefined ? { max: p.max } : {}),
    };
  } else {
    const unit = w.lifetime!;
    if (unit === 'min' && spec.life.seconds % 60 !== 0) {
      problem(
        [...at, 'lifetime'],
        `life.seconds ${spec.life.seconds} is not whole minutes`,
        'make control.life.seconds a multiple of 60 for a register counting minutes',
      );
      return undefined;
    }
    const raw = unit === 'min' ? spec.life.seconds / 60 : spec.life.seconds;
    if (!fits(raw)) {
      problem([...at, 'lifetime'], `${raw} ${unit} does not fit a ${type}`, 'shorten control.life.seconds');
      return undefined;
    }
    value = { kind: 'lifetime', unit };
  }
  return {
    address: pdu,
    type,
    order: { wordOrder: file.defaults?.wordOrder ?? 'big', byteOrder: file.defaults?.byteOrder ?? 'big' },
    value,
    refresh: w.refresh ?? false,
    label: registerLabel('holding', w.address, w.label),
  };
}

/** The request address of a register the document numbers `address` (after the profile's addressBase), or a finding. */
export function pduOf(
  file: ProfileFile,
  address: number,
  type: ControlType,
  at: Path,
  problem: (at: Path, message: string, hint: string) => void,
): number | undefined {
  const base = file.defaults?.addressBase ?? 0;
  const pdu = address - base;
  if (pdu >= 0 && pdu + TYPE_WIDTH[type] <= 0x10000) return pdu;
  problem(
    [...at, 'address'],
    `a ${type} at ${address} is outside the register space (addressBase is ${base})`,
    'check the number against the document',
  );
  return undefined;
}

/** A register as messages and the audit name it: the document's number, in hex too, and its name. */
export function registerLabel(fn: 'holding' | 'input', address: number, label?: string): string {
  const shown = `${address} (0x${address.toString(16).padStart(4, '0').toUpperCase()})`;
  return `${fn} register ${shown}${label ? ` '${label}'` : ''}`;
}
