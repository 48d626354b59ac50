/**
 * encodeNumber, the register writer's codec: words written out by hand from IEEE 754 and two's
 * complement (not from the decoder), then the round trip through decodeNumber for every type.
 */
import { describe, expect, it } from 'vitest';
import { decodeNumber, encodeNumber, NUMERIC_TYPES, typeRange } from '../../src/modbus/codec.js';

describe('encodeNumber', () => {
  it('gives the words a person reads off the standards', () => {
    expect(encodeNumber('u16', 0xaa)).toEqual([0x00aa]);
    expect(encodeNumber('s16', -1)).toEqual([0xffff]);
    expect(encodeNumber('u32', 60)).toEqual([0, 60]);
    expect(encodeNumber('u32', 60, { wordOrder: 'little' })).toEqual([60, 0]);
    expect(encodeNumber('s32', -1500)).toEqual([0xffff, 0xfa24]);
    // 2000.0 = 0x44FA0000, 1500.0 = 0x44BB8000
    expect(encodeNumber('f32', 2000)).toEqual([0x44fa, 0x0000]);
    expect(encodeNumber('f32', 1500, { wordOrder: 'little' })).toEqual([0x8000, 0x44bb]);
    expect(encodeNumber('u16', 0x1234, { byteOrder: 'little' })).toEqual([0x3412]);
    expect(encodeNumber('u64', 2 ** 40)).toEqual([0, 0x100, 0, 0]);
  });

  it('round-trips through decodeNumber in every order', () => {
    for (const type of NUMERIC_TYPES) {
      const [lo, hi] = typeRange(type);
      const samples =
        type === 'f32' ? [0, -1.5, 2000, 2 ** 100] : [lo, 0, 1, Math.min(hi, 2 ** 52), hi].filter(Number.isSafeInteger);
      for (const v of samples)
        for (const wordOrder of ['big', 'little'] as const)
          for (const byteOrder of ['big', 'little'] as const) {
            const order = { wordOrder, byteOrder };
            expect(decodeNumber(type, encodeNumber(type, v, order), 0, order), `${type} ${v}`).toBe(v);
          }
    }
  });

  it('refuses an integer type a value it cannot hold, rather than wrapping it', () => {
    expect(() => encodeNumber('u16', 65536)).toThrow(RangeError);
    expect(() => encodeNumber('u16', -1)).toThrow(RangeError);
    expect(() => encodeNumber('s16', 1.5)).toThrow(RangeError);
  });
});
