/**
 * Where a counter register wraps and how coarsely it counts, in Wh under the scale factor in force
 * when it was read (core/channels.ts CounterScale), for the energy tracker's judgement of steps:
 * a SunSpec acc32 with WH_SF 1 wraps at 2^32 × 10 Wh and moves in 10 Wh steps, not at 2^32 Wh
 * (SunSpec Information Model Reference: acc32 is an unsigned accumulator that rolls over, its
 * value × 10^SF).
 */
import type { CounterScale } from '../core/channels.js';
import type { NumericType, RegisterType } from '../modbus/codec.js';
import type { PointValue } from '../modbus/sunspec/decode.js';
import { MODELS, type PointType } from '../modbus/sunspec/models.js';

/** bits of an unsigned integer register that counts up and rolls over; signed and float ones do not wrap cleanly */
const UNSIGNED_BITS: Partial<Record<PointType | NumericType, number>> = {
  acc16: 16,
  uint16: 16,
  u16: 16,
  acc32: 32,
  uint32: 32,
  u32: 32,
  acc64: 64,
  uint64: 64,
  u64: 64,
};

const FLOAT32_EPSILON = 2 ** -23;

/** A register of `type` times `factor` (unit and scale factor folded in), holding `value` Wh now. */
export function counterScale(type: PointType | RegisterType, factor: number, value: number): CounterScale {
  const bits = UNSIGNED_BITS[type as PointType | NumericType];
  if (bits !== undefined) return { wrapWh: 2 ** bits * Math.abs(factor), stepWh: Math.abs(factor) };
  // a float's resolution is relative to its value
  if (type === 'float32' || type === 'f32') return { wrapWh: Infinity, stepWh: Math.abs(value) * FLOAT32_EPSILON };
  return { wrapWh: Infinity, stepWh: Math.abs(factor) };
}

/** The scale of SunSpec point `name` of model `modelId`, its scale factor read from `sfs` (the model's fixed block). */
export function sunspecCounterScale(
  modelId: number,
  name: string,
  sfs: Record<string, PointValue>,
  value: number | undefined,
): CounterScale | undefined {
  if (value === undefined) return undefined;
  const def = MODELS.get(modelId);
  const pt = def?.fixed.find((p) => p.name === name) ?? def?.repeating?.find((p) => p.name === name);
  if (!pt) return undefined;
  const sf = pt.sf ? sfs[pt.sf] : 0;
  return counterScale(pt.type, 10 ** (typeof sf === 'number' ? sf : 0), value);
}
