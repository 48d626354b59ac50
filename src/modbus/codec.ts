/**
 * Register codecs. A Modbus register is a 16-bit word sent high byte first; how a multi-word
 * value is laid out differs between makers, so every multi-word codec takes an order:
 * - word order `big` (default): the most significant register comes first (Modbus and SunSpec
 *   convention, Eastron, Huawei, Victron); `little`: least significant first (Sungrow "U32"
 *   registers, the "CDAB" layout of many PLCs);
 * - byte order `big` (default): each register high byte first; `little` swaps the two bytes of
 *   every register ("BADC"), rare but seen on gateways that re-pack RS-485 data.
 */
export type WordOrder = 'big' | 'little';
export type ByteOrder = 'big' | 'little';

export interface Order {
  wordOrder?: WordOrder;
  byteOrder?: ByteOrder;
}

const BIG: Order = {};

function word(regs: readonly number[], i: number, byteOrder: ByteOrder | undefined): number {
  const v = regs[i]! & 0xffff;
  return byteOrder === 'little' ? ((v & 0xff) << 8) | (v >> 8) : v;
}

/** The registers of one value as big-endian words, most significant first. */
export function wordsOf(regs: readonly number[], i: number, n: number, order: Order = BIG): number[] {
  const out: number[] = [];
  for (let k = 0; k < n; k++) out.push(word(regs, i + k, order.byteOrder));
  return order.wordOrder === 'little' ? out.reverse() : out;
}

/** The raw bits of an n-register value, as an unsigned integer (sentinel checks compare these). */
export function rawBits(regs: readonly number[], i: number, n: number, order: Order = BIG): bigint {
  let v = 0n;
  for (const w of wordsOf(regs, i, n, order)) v = (v << 16n) | BigInt(w);
  return v;
}

export function u16(regs: readonly number[], i: number, order: Order = BIG): number {
  return word(regs, i, order.byteOrder);
}
export function s16(regs: readonly number[], i: number, order: Order = BIG): number {
  const v = u16(regs, i, order);
  return v >= 0x8000 ? v - 0x10000 : v;
}
export function u32(regs: readonly number[], i: number, order: Order = BIG): number {
  const [hi, lo] = wordsOf(regs, i, 2, order);
  return hi! * 0x10000 + lo!;
}
export function s32(regs: readonly number[], i: number, order: Order = BIG): number {
  const v = u32(regs, i, order);
  return v >= 0x80000000 ? v - 0x100000000 : v;
}
/**
 * 64-bit values as numbers: exact up to 2^53, which is 9 PWh for a Wh counter — every real
 * energy counter fits; a value beyond that is rounded, not wrapped.
 */
export function u64(regs: readonly number[], i: number, order: Order = BIG): number {
  return Number(rawBits(regs, i, 4, order));
}
export function s64(regs: readonly number[], i: number, order: Order = BIG): number {
  return Number(BigInt.asIntN(64, rawBits(regs, i, 4, order)));
}
/** IEEE 754 single precision over two registers. */
export function f32(regs: readonly number[], i: number, order: Order = BIG): number {
  const view = new DataView(new ArrayBuffer(4));
  view.setUint32(0, u32(regs, i, order));
  return view.getFloat32(0);
}
/** SunSpec acc32: an unsigned accumulator that wraps at 2^32 (the energy tracker absorbs the wrap). */
export const acc32 = u32;

/** ASCII, two characters per register, NUL padded; trailing NULs and spaces trimmed */
export function str(regs: readonly number[], i: number, n: number, order: Order = BIG): string {
  let out = '';
  for (let k = 0; k < n; k++) {
    const r = word(regs, i + k, order.byteOrder);
    out += String.fromCharCode(r >> 8, r & 0xff);
  }
  // eslint-disable-next-line no-control-regex
  return out.replace(/[\u0000\s]+$/u, '').replace(/\u0000/gu, '');
}

export const NUMERIC_TYPES = ['u16', 's16', 'u32', 's32', 'u64', 's64', 'f32', 'acc32'] as const;
export type NumericType = (typeof NUMERIC_TYPES)[number];
export type RegisterType = NumericType | 'string';

/** Registers a value of the type occupies (a string's length is its own). */
export const TYPE_WIDTH: Record<NumericType, number> = {
  u16: 1,
  s16: 1,
  u32: 2,
  s32: 2,
  acc32: 2,
  f32: 2,
  u64: 4,
  s64: 4,
};

const NUMERIC_DECODERS: Record<NumericType, (regs: readonly number[], i: number, order: Order) => number> = {
  u16,
  s16,
  u32,
  s32,
  u64,
  s64,
  f32,
  acc32,
};

export function decodeNumber(type: NumericType, regs: readonly number[], i: number, order: Order = BIG): number {
  return NUMERIC_DECODERS[type](regs, i, order);
}

/** The inclusive raw range an integer type holds (f32: the finite float32 range). */
export function typeRange(type: NumericType): readonly [number, number] {
  if (type === 'f32') return [-3.4028234663852886e38, 3.4028234663852886e38];
  const bits = TYPE_WIDTH[type] * 16;
  const signed = type === 's16' || type === 's32' || type === 's64';
  return signed ? [-(2 ** (bits - 1)), 2 ** (bits - 1) - 1] : [0, 2 ** bits - 1];
}

/**
 * A number as the registers of its type, laid out in `order`: the inverse of decodeNumber, for
 * register writes. Integer types take an integer within typeRange (the caller rounds and clamps).
 */
export function encodeNumber(type: NumericType, value: number, order: Order = BIG): number[] {
  const n = TYPE_WIDTH[type];
  let bits: bigint;
  if (type === 'f32') {
    const view = new DataView(new ArrayBuffer(4));
    view.setFloat32(0, value);
    bits = BigInt(view.getUint32(0));
  } else {
    const [lo, hi] = typeRange(type);
    if (!Number.isInteger(value) || value < lo || value > hi)
      throw new RangeError(`${value} is not a ${type} (an integer in ${lo}..${hi})`);
    bits = BigInt.asUintN(n * 16, BigInt(value));
  }
  const words: number[] = [];
  for (let k = n - 1; k >= 0; k--) words.push(Number((bits >> BigInt(k * 16)) & 0xffffn));
  const swapped = order.byteOrder === 'little' ? words.map((w) => ((w & 0xff) << 8) | (w >> 8)) : words;
  return order.wordOrder === 'little' ? swapped.reverse() : swapped;
}
