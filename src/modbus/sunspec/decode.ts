import { f32, rawBits, s16, s32, str, u16, u32 } from '../codec.js';
import { blockLength, type ModelDef, NOT_IMPLEMENTED, type PointDef } from './points.js';

export type PointValue = number | string | undefined;

export interface ModelValues {
  id: number;
  /** fixed block, scale factors applied; an unimplemented point is undefined (absent, not zero) */
  fixed: Record<string, PointValue>;
  /** repeating blocks (e.g. MPPT modules), scale factors from the fixed block applied */
  repeating: Record<string, PointValue>[];
}

const NI64: Record<'int64' | 'uint64' | 'acc64', bigint> = {
  int64: -(1n << 63n),
  uint64: (1n << 64n) - 1n,
  acc64: 0n,
};

/** 64-bit integers, high word first; their not-implemented patterns are compared on the raw bits */
function word64(type: 'int64' | 'uint64' | 'acc64', regs: readonly number[], i: number): number | undefined {
  const raw = rawBits(regs, i, 4);
  const v = type === 'int64' ? BigInt.asIntN(64, raw) : raw;
  return v === NI64[type] ? undefined : Number(v);
}

function rawPoint(pt: PointDef, regs: readonly number[], i: number): PointValue {
  // a model whose L is shorter than the published definition: the points it lacks are absent
  if (i + pt.size > regs.length) return undefined;
  let v: number;
  switch (pt.type) {
    case 'string':
      return str(regs, i, pt.size) || undefined;
    case 'pad':
      return undefined;
    case 'float32':
      v = f32(regs, i);
      return Number.isFinite(v) ? v : undefined;
    case 'int64':
    case 'uint64':
    case 'acc64':
      return word64(pt.type, regs, i);
    case 'int16':
    case 'sunssf':
      v = s16(regs, i);
      break;
    case 'int32':
      v = s32(regs, i);
      break;
    case 'uint32':
    case 'acc32':
    case 'bitfield32':
      v = u32(regs, i);
      break;
    default:
      v = u16(regs, i);
  }
  return v === NOT_IMPLEMENTED[pt.type] ? undefined : v;
}

function decodeRaw(points: readonly PointDef[], regs: readonly number[], start: number): Record<string, PointValue> {
  const out: Record<string, PointValue> = {};
  let i = start;
  for (const pt of points) {
    out[pt.name] = rawPoint(pt, regs, i);
    i += pt.size;
  }
  return out;
}

function applyScale(
  points: readonly PointDef[],
  raw: Record<string, PointValue>,
  sfSource: Record<string, PointValue>,
): void {
  for (const pt of points) {
    if (!pt.sf) continue;
    const v = raw[pt.name];
    if (typeof v !== 'number') continue;
    const sf = sfSource[pt.sf];
    // SunSpec allows scale factors -10..10; anything else is a device bug, so the value is unusable.
    // A negative one divides (as profiles/engine.ts does): 312 / 10 is 31.2, 312 * 0.1 is 31.200000000000003
    raw[pt.name] =
      typeof sf === 'number' && sf >= -10 && sf <= 10 ? (sf < 0 ? v / 10 ** -sf : v * 10 ** sf) : undefined;
  }
}

/** How many repeating blocks to decode: what L holds, capped by the model's count point when the device filled it in. */
function repeatCount(def: ModelDef, rawFixed: Record<string, PointValue>, available: number): number {
  const declared = def.countPoint ? rawFixed[def.countPoint] : undefined;
  return typeof declared === 'number' ? Math.min(declared, available) : available;
}

/** Decode one model from its registers (the registers after the ID and L header). */
export function decodeModel(def: ModelDef, regs: readonly number[]): ModelValues {
  const fixedLen = blockLength(def.fixed);
  const rawFixed = decodeRaw(def.fixed, regs, 0);
  const repeating: Record<string, PointValue>[] = [];
  if (def.repeating) {
    const len = blockLength(def.repeating);
    const n = repeatCount(def, rawFixed, Math.max(0, Math.floor((regs.length - fixedLen) / len)));
    for (let k = 0; k < n; k++) repeating.push(decodeRaw(def.repeating, regs, fixedLen + k * len));
    for (const r of repeating) applyScale(def.repeating, r, rawFixed);
  }
  // scale the fixed block last: the repeating blocks read the raw scale factors from it
  applyScale(def.fixed, rawFixed, { ...rawFixed });
  return { id: def.id, fixed: rawFixed, repeating };
}

/** Registers worth reading of a model whose L is `length`: a model without repeating blocks needs no more than its definition. */
export function neededLength(def: ModelDef, length: number): number {
  return def.repeating ? length : Math.min(length, blockLength(def.fixed));
}

export function num(v: PointValue): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}
