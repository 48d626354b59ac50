/**
 * A schema-valid profile file → the engine's DeviceProfile, checking what the schema cannot:
 * address or sum (not both), string lengths, register ranges that fit in 16-bit addressing,
 * one condition per rule, regular expressions that compile, 64-bit sentinels written exactly.
 * Every problem comes back as a Finding with its path, so the loader can name the line.
 */

import type { DeviceRole } from '../config/types.js';
import { type DeviceStatus, isLiveChannel } from '../core/channels.js';
import { type RegisterType, TYPE_WIDTH } from '../modbus/codec.js';
import type { PathSegment } from '../yaml/errors.js';
import type { Finding } from '../yaml/messages.js';
import {
  type CompiledIdentityRegister,
  type CompiledMatch,
  type CompiledPvString,
  type CompiledRole,
  type CompiledSource,
  type CompiledStateRule,
  type CompiledStatus,
  type DeviceProfile,
  INSTANT_KEYS,
  type ValueRef,
} from './compiled.js';
import { compileControl } from './control-compile.js';
import { compileLimit } from './limit-compile.js';
import type {
  IdentityRegister,
  MatchSpec,
  ProfileFile,
  PvStringSpec,
  RegisterSpec,
  RoleSpec,
  SourceSpec,
  StateSpec,
  StatusSpec,
} from './profile-types.js';

const UNIT_FACTOR: Record<string, number> = {
  W: 1,
  kW: 1000,
  Wh: 1,
  kWh: 1000,
  MWh: 1e6,
  '%': 1,
  Hz: 1,
  V: 1,
  A: 1,
  '°C': 1,
};
const DEFAULT_BATCHING = { maxRegisters: 125, maxGap: 16 };

type Path = PathSegment[];

class Compiler {
  readonly findings: Finding[] = [];
  constructor(private readonly file: ProfileFile) {}

  problem(at: Path, message: string, hint?: string): void {
    this.findings.push({ segments: at, anchor: at, message, ...(hint ? { hint } : {}) });
  }

  private sentinel(raw: number | string, width: number, at: Path): bigint | undefined {
    if (typeof raw === 'number' && !Number.isSafeInteger(raw)) {
      this.problem(at, `${raw} is too large to be read exactly`, `put it in quotes, e.g. '0x${'F'.repeat(width * 4)}'`);
      return undefined;
    }
    let v = BigInt(raw);
    const bits = BigInt(width * 16);
    // a negative sentinel is written as the signed value: compare its two's complement bits
    if (v < 0n) v = BigInt.asUintN(width * 16, v);
    if (v >> bits !== 0n) {
      this.problem(at, `${String(raw)} does not fit in ${width * 16} bits`, 'give the raw value the register holds');
      return undefined;
    }
    return v;
  }

  /** One register reference, with defaults applied; `address` overrides the spec's (sum parts). */
  ref(spec: RegisterSpec, at: Path, address?: number): ValueRef | undefined {
    const d = this.file.defaults ?? {};
    const type = spec.type as RegisterType;
    const addr = address ?? spec.address;
    if (addr === undefined) return undefined;
    if (type === 'string' && spec.length === undefined) {
      this.problem(
        [...at, 'type'],
        'a string needs its length in registers',
        'add length: N (two characters per register)',
      );
      return undefined;
    }
    if (type !== 'string' && spec.length !== undefined) {
      this.problem(
        [...at, 'length'],
        `length only applies to type string, this register is ${type}`,
        'remove the line',
      );
    }
    const count = type === 'string' ? spec.length! : TYPE_WIDTH[type];
    const maxRegisters = this.file.batching?.maxRegisters ?? DEFAULT_BATCHING.maxRegisters;
    if (count > maxRegisters) {
      this.problem(
        [...at, 'length'],
        `${count} registers do not fit in one request (batching.maxRegisters is ${maxRegisters})`,
        'raise batching.maxRegisters or shorten the string',
      );
      return undefined;
    }
    const base = d.addressBase ?? 0;
    const pdu = addr - base;
    if (pdu < 0) {
      this.problem(
        [...at, 'address'],
        `address ${addr} is below the first register (addressBase is ${base})`,
        'check the number against the document',
      );
      return undefined;
    }
    if (pdu + count > 0x10000) {
      this.problem(
        [...at, 'address'],
        `a ${type} at ${addr} runs past the last register (65535)`,
        'check the number against the document',
      );
      return undefined;
    }
    const sentinels: bigint[] = [];
    const written = spec.sentinels ?? d.sentinels?.[type] ?? [];
    written.forEach((s, i) => {
      const v = this.sentinel(s, count, spec.sentinels ? [...at, 'sentinels', i] : ['defaults', 'sentinels', type, i]);
      if (v !== undefined) sentinels.push(v);
    });
    const fn = spec.function ?? d.function ?? 'holding';
    const order = {
      wordOrder: spec.wordOrder ?? d.wordOrder ?? 'big',
      byteOrder: spec.byteOrder ?? d.byteOrder ?? 'big',
    } as const;
    const shown = `${addr} (0x${addr.toString(16).padStart(4, '0').toUpperCase()})`;
    return {
      fn,
      address: pdu,
      count,
      type,
      order,
      sentinels,
      optional: spec.optional ?? false,
      intervalMs: (spec.pollIntervalSeconds ?? 0) * 1000,
      label: `${fn} register ${shown}${spec.label ? ` '${spec.label}'` : ''}`,
    };
  }

  /** address xor sum → the parts to add up */
  parts(spec: RegisterSpec, at: Path): ValueRef[] | undefined {
    if (spec.address !== undefined && spec.sum !== undefined) {
      this.problem(
        [...at, 'sum'],
        'give either address or sum, not both',
        'keep sum for values added over several registers, address for one',
      );
      return undefined;
    }
    if (spec.address === undefined && spec.sum === undefined) {
      this.problem(
        at,
        "required key 'address' is missing",
        'add address: N, or sum: [N, M, ...] to add several registers',
      );
      return undefined;
    }
    if (spec.sum !== undefined && spec.type === 'string') {
      this.problem([...at, 'sum'], 'text registers cannot be added up', 'use address for a string');
      return undefined;
    }
    const addresses = spec.sum ?? [spec.address!];
    const refs = addresses.map((a, i) => this.ref(spec, spec.sum ? [...at, 'sum', i] : at, a));
    return refs.every((r): r is ValueRef => r !== undefined) ? refs : undefined;
  }

  single(spec: RegisterSpec, at: Path): ValueRef | undefined {
    if (spec.sum !== undefined) {
      this.problem([...at, 'sum'], 'this register cannot be a sum', 'give one address');
      return undefined;
    }
    const p = this.parts(spec, at);
    return p?.[0];
  }

  numeric(spec: RegisterSpec, at: Path): boolean {
    if (spec.type !== 'string') return true;
    this.problem([...at, 'type'], 'a channel needs a number, not text', 'use the numeric type the document gives');
    return false;
  }

  source(spec: SourceSpec, at: Path): CompiledSource | undefined {
    if (!this.numeric(spec, at)) return undefined;
    const parts = this.parts(spec, at);
    if (spec.scale !== undefined && spec.scaleFactor !== undefined) {
      this.problem(
        [...at, 'scaleFactor'],
        'give either scale or scaleFactor, not both',
        'scale is a fixed factor, scaleFactor a register with 10^sf',
      );
      return undefined;
    }
    const scaleFactor =
      spec.scaleFactor && this.numeric(spec.scaleFactor, [...at, 'scaleFactor'])
        ? this.single(spec.scaleFactor, [...at, 'scaleFactor'])
        : undefined;
    const signFrom =
      spec.signFrom && this.numeric(spec.signFrom, [...at, 'signFrom'])
        ? this.single(spec.signFrom, [...at, 'signFrom'])
        : undefined;
    const counter = at.some((k) => k === 'inWh' || k === 'outWh');
    if (spec.offset !== undefined && counter) {
      this.problem(
        [...at, 'offset'],
        'a lifetime counter takes no offset',
        'remove offset: a counter counts from the device’s own zero',
      );
      return undefined;
    }
    const otherwise = spec.otherwise ? this.source(spec.otherwise, [...at, 'otherwise']) : undefined;
    const minus = spec.minus?.map((a, i) => this.ref(spec, [...at, 'minus', i], a));
    if (
      !parts ||
      (spec.scaleFactor && !scaleFactor) ||
      (spec.signFrom && !signFrom) ||
      (spec.otherwise && !otherwise) ||
      minus?.some((r) => r === undefined)
    )
      return undefined;
    return {
      ...(otherwise ? { otherwise } : {}),
      parts,
      ...(minus ? { minus: minus as ValueRef[] } : {}),
      factor: (spec.scale ?? 1) * UNIT_FACTOR[spec.unit]!,
      ...(scaleFactor ? { scaleFactor } : {}),
      ...(spec.offset ? { offset: spec.offset * UNIT_FACTOR[spec.unit]! } : {}),
      sign: spec.sign ?? 1,
      absolute: spec.absolute ?? false,
      ...(signFrom ? { signFrom: { ref: signFrom, mask: spec.signFrom!.negativeMask } } : {}),
      label: [parts.map((p) => p.label).join(' + '), ...(minus ?? []).map((p) => p!.label)].join(' − '),
    };
  }

  state(spec: StateSpec, at: Path): CompiledRole['state'] {
    const rules: CompiledStateRule[] = [];
    spec.rules.forEach((r, i) => {
      const here = [...at, 'rules', i];
      const conditions = [r.in, r.anyBits, r.below].filter((c) => c !== undefined).length;
      if (conditions !== 1) {
        this.problem(
          here,
          conditions === 0 ? 'the rule has no condition' : 'the rule has more than one condition',
          'give exactly one of in, anyBits or below',
        );
        return;
      }
      const refs = r.registers.map((reg, k) =>
        this.numeric(reg, [...here, 'registers', k]) ? this.single(reg, [...here, 'registers', k]) : undefined,
      );
      if (!refs.every((x): x is ValueRef => x !== undefined)) return;
      rules.push({
        refs,
        ...(r.in ? { in: new Set(r.in) } : {}),
        ...(r.anyBits !== undefined ? { anyBits: r.anyBits } : {}),
        ...(r.below !== undefined ? { below: r.below } : {}),
        scale: r.scale ?? 1,
        state: r.state,
      });
    });
    return { rules, otherwise: spec.otherwise };
  }

  /**
   * The status register and its table turned round (code → state). A code listed twice, one the
   * register cannot hold, or one that is the register's not-available value is a mistake in the
   * table, named at its line.
   */
  status(spec: StatusSpec, at: Path): CompiledStatus | undefined {
    const type = spec.type as RegisterType;
    if (type === 'string' || type === 'f32') {
      this.problem(
        [...at, 'type'],
        `a status register holds a code, not a ${type === 'f32' ? 'float' : 'text'}`,
        'use the integer type the document gives, usually u16',
      );
      return undefined;
    }
    const ref = this.single({ ...spec, optional: spec.optional ?? true }, at);
    if (!ref) return undefined;
    const signed = type.startsWith('s');
    const max = 2 ** (ref.count * 16 - (signed ? 1 : 0)) - 1;
    const states = new Map<number, DeviceStatus>();
    let ok = true;
    for (const [state, codes] of Object.entries(spec.states) as [DeviceStatus, number[]][]) {
      codes.forEach((code, i) => {
        const here = [...at, 'states', state, i];
        const hex = `0x${code.toString(16).toUpperCase()}`;
        const before = states.get(code);
        if (code > max) {
          this.problem(here, `${code} (${hex}) does not fit in a ${type} register`, `a ${type} holds 0 to ${max}`);
          ok = false;
        } else if (before !== undefined) {
          this.problem(here, `code ${code} (${hex}) is listed for ${before} already`, 'give each code one state');
          ok = false;
        } else if (ref.sentinels.includes(BigInt(code))) {
          this.problem(
            here,
            `${hex} is the register's not-available value (sentinels)`,
            'leave it out: it reads as no status, not as a state',
          );
          ok = false;
        } else states.set(code, state);
      });
    }
    return ok ? { ref, states } : undefined;
  }

  /** PV strings: live extras, so a firmware without a string's registers costs only that string. */
  pvString(spec: PvStringSpec, at: Path): CompiledPvString | undefined {
    const extra = (s: SourceSpec, key: string) => this.source({ ...s, optional: s.optional ?? true }, [...at, key]);
    const voltage = extra(spec.voltage_DC_V, 'voltage_DC_V');
    const current = extra(spec.current_DC_A, 'current_DC_A');
    const power = spec.power_W && extra(spec.power_W, 'power_W');
    if (!voltage || !current || (spec.power_W && !power)) return undefined;
    return { voltage, current, ...(power ? { power } : {}) };
  }

  role(spec: RoleSpec, at: Path): CompiledRole {
    const out: CompiledRole = { instant: {} };
    for (const key of INSTANT_KEYS) {
      const s = spec[key];
      // a live channel is an extra: a firmware without its register must not cost the poll its power and counters
      const c = s && this.source(isLiveChannel(key) ? { ...s, optional: s.optional ?? true } : s, [...at, key]);
      if (c) out.instant[key] = c;
    }
    for (const key of ['inWh', 'outWh', 'capacityWh'] as const) {
      const s = spec[key];
      const c = s && this.source(s, [...at, key]);
      if (c) out[key] = c;
    }
    if (spec.state) out.state = this.state(spec.state, [...at, 'state']);
    const status = spec.status && this.status(spec.status, [...at, 'status']);
    if (status) out.status = status;
    if (spec.pv) {
      const power = spec.pv.power_W && this.source(spec.pv.power_W, [...at, 'pv', 'power_W']);
      const yieldWh = spec.pv.outWh && this.source(spec.pv.outWh, [...at, 'pv', 'outWh']);
      const strings = (spec.pv.strings ?? [])
        .map((st, i) => this.pvString(st, [...at, 'pv', 'strings', i]))
        .filter((st): st is CompiledPvString => st !== undefined);
      const countSpec = spec.pv.stringCount;
      const stringCount =
        countSpec && this.numeric(countSpec, [...at, 'pv', 'stringCount'])
          ? this.single({ ...countSpec, optional: countSpec.optional ?? true }, [...at, 'pv', 'stringCount'])
          : undefined;
      if (countSpec && strings.length === 0)
        this.problem([...at, 'pv', 'stringCount'], 'stringCount without strings', 'list the strings under strings:');
      out.pv = {
        ...(power ? { power_W: power } : {}),
        ...(yieldWh ? { outWh: yieldWh } : {}),
        strings,
        ...(stringCount ? { stringCount } : {}),
      };
    }
    return out;
  }

  match(m: MatchSpec, at: Path): CompiledMatch | undefined {
    const conditions = [m.in, m.range, m.pattern].filter((c) => c !== undefined).length;
    if (conditions !== 1) {
      this.problem(
        at,
        conditions === 0 ? 'the match has no condition' : 'the match has more than one condition',
        'give exactly one of in, range or pattern',
      );
      return undefined;
    }
    if ((m.pattern !== undefined) !== (m.type === 'string')) {
      this.problem(
        at,
        m.pattern !== undefined ? 'pattern only applies to type string' : 'a string register is matched with pattern',
        'use pattern for text, in or range for numbers',
      );
      return undefined;
    }
    let pattern: RegExp | undefined;
    if (m.pattern !== undefined) {
      try {
        pattern = new RegExp(m.pattern);
      } catch (e) {
        this.problem(
          [...at, 'pattern'],
          `not a valid regular expression: ${(e as Error).message}`,
          'write a JavaScript regular expression, e.g. ^SUN2000',
        );
        return undefined;
      }
    }
    if (m.range && m.range[0] > m.range[1]) {
      this.problem([...at, 'range'], `the range [${m.range.join(', ')}] is empty`, 'write [lowest, highest]');
      return undefined;
    }
    const ref = this.single(m, at);
    if (!ref) return undefined;
    return {
      ref,
      ...(m.in ? { in: new Set(m.in) } : {}),
      ...(m.range ? { range: [m.range[0], m.range[1]] as const } : {}),
      ...(pattern ? { pattern } : {}),
      scale: m.scale ?? 1,
    };
  }

  identityRegister(r: IdentityRegister, at: Path): CompiledIdentityRegister | undefined {
    const ref = this.single(r, at);
    return ref ? { ref, ...(r.map ? { map: r.map } : {}) } : undefined;
  }
}

/** Builds the engine's profile; `fileName` is the name the file has on disk, without .yaml. */
export function compileProfile(
  file: ProfileFile,
  fileName: string,
  filePath: string,
): { profile?: DeviceProfile; findings: Finding[] } {
  const c = new Compiler(file);
  if (file.name !== fileName) {
    c.problem(
      ['name'],
      `the name '${file.name}' differs from the file name '${fileName}'`,
      `write name: ${fileName}, the name site.yaml's profile: refers to`,
    );
  }
  const roleNames = Object.keys(file.roles) as DeviceRole[];
  if (roleNames.length === 0)
    c.problem(
      ['roles'],
      'no role is described',
      'add inverter:, battery:, grid-meter: or consumption-meter: under roles:',
    );
  const roles: DeviceProfile['roles'] = {};
  for (const r of roleNames) roles[r] = c.role(file.roles[r]!, ['roles', r]);
  const match = file.identify.match
    .map((m, i) => c.match(m, ['identify', 'match', i]))
    .filter((m): m is CompiledMatch => m !== undefined);
  const unless = (file.identify.unless ?? [])
    .map((m, i) => c.match(m, ['identify', 'unless', i]))
    .filter((m): m is CompiledMatch => m !== undefined);
  const registers: DeviceProfile['identify']['registers'] = {};
  for (const key of ['manufacturer', 'model', 'serial', 'version'] as const) {
    const r = file.identify.registers?.[key];
    const compiled = r && c.identityRegister(r, ['identify', 'registers', key]);
    if (compiled) registers[key] = compiled;
  }
  const control = compileControl(file, c.findings);
  const limit = compileLimit(file, c.findings);
  if (c.findings.length > 0) return { findings: c.findings };
  return {
    findings: [],
    profile: {
      name: file.name,
      file: filePath,
      manufacturer: file.manufacturer,
      models: file.models,
      source: { title: file.source.title, version: file.source.version, url: file.source.url },
      batching: { ...DEFAULT_BATCHING, ...file.batching },
      besideSunSpec: file.besideSunSpec === true,
      identify: {
        manufacturer: file.identify.manufacturer,
        ...(file.identify.model ? { model: file.identify.model } : {}),
        match,
        unless,
        registers,
      },
      roles,
      ...(control ? { control } : {}),
      ...(limit ? { limit } : {}),
    },
  };
}
