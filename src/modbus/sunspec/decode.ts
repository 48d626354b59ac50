import { s16, s32, str, u16, u32 } from '../codec.js';
import { NOT_IMPLEMENTED, blockLength, type ModelDef, type PointDef } from './models.js';

export type PointValue = number | string | undefined;

export interface ModelValues {
  id: number;
  /** fixed block, scale factors applied; an unimplemented point is undefined (absent, not zero) */
  fixed: Record<string, PointValue>;
  /** repeating blocks (e.g. MPPT modules), scale factors from the fixed block applied */
  repeating: Record<string, PointValue>[];
}

function rawPoint(pt: PointDef, regs: readonly number[], i: number): PointValue {
  let v: number;
  switch (pt.type) {
    case 'string':
      return str(regs, i, pt.size) || undefined;
    case 'pad':
      return undefined;
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

function applyScale(points: readonly PointDef[], raw: Record<string, PointValue>, sfSource: Record<string, PointValue>): void {
  for (const pt of points) {
    if (!pt.sf) continue;
    const v = raw[pt.name];
    if (typeof v !== 'number') continue;
    const sf = sfSource[pt.sf];
    // SunSpec allows scale factors -10..10; anything else is a device bug, so the value is unusable
    raw[pt.name] = typeof sf === 'number' && sf >= -10 && sf <= 10 ? v * 10 ** sf : undefined;
  }
}

/** Decode one model from its registers (the registers after the ID and L header). */
export function decodeModel(def: ModelDef, regs: readonly number[]): ModelValues {
  const fixedLen = blockLength(def.fixed);
  const rawFixed = decodeRaw(def.fixed, regs, 0);
  const repeating: Record<string, PointValue>[] = [];
  if (def.repeating) {
    const len = blockLength(def.repeating);
    for (let i = fixedLen; i + len <= regs.length; i += len) repeating.push(decodeRaw(def.repeating, regs, i));
    for (const r of repeating) applyScale(def.repeating, r, rawFixed);
  }
  // scale the fixed block last: the repeating blocks read the raw scale factors from it
  applyScale(def.fixed, rawFixed, { ...rawFixed });
  return { id: def.id, fixed: rawFixed, repeating };
}

export function num(v: PointValue): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}
