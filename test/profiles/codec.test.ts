/**
 * Register codecs against byte vectors written out from the public register documents, not
 * produced by the codec itself.
 */
import { describe, expect, it } from 'vitest';
import { acc32, decodeNumber, f32, rawBits, s16, s32, s64, str, u16, u32, u64 } from '../../src/modbus/codec.js';

/** "44 79 C0 00" → [0x4479, 0xC000]: registers as the bytes arrive on the wire */
function wire(hex: string): number[] {
  const bytes = hex.split(/\s+/).map((b) => parseInt(b, 16));
  const regs: number[] = [];
  for (let i = 0; i < bytes.length; i += 2) regs.push((bytes[i]! << 8) | bytes[i + 1]!);
  return regs;
}

describe('IEEE 754 float32 (Eastron SDM input registers)', () => {
  it('0x4479C000 is 999.0 W, high word first as the SDM630 protocol sends it', () => {
    expect(f32(wire('44 79 C0 00'), 0)).toBe(999);
  });
  it('negative power: 0xC47A0000 is -1000.0 W (export on a grid meter)', () => {
    expect(f32(wire('C4 7A 00 00'), 0)).toBe(-1000);
  });
  it('energy counter 0x461C4000 is 10000.0 kWh', () => {
    expect(f32(wire('46 1C 40 00'), 0)).toBe(10000);
  });
  it('word-swapped float ("CDAB"): the same 999.0 with the low word first', () => {
    expect(f32(wire('C0 00 44 79'), 0, { wordOrder: 'little' })).toBe(999);
  });
  it('byte-swapped float ("BADC")', () => {
    expect(f32(wire('79 44 00 C0'), 0, { byteOrder: 'little' })).toBe(999);
  });
  it('NaN comes through as NaN (the profile engine treats it as absent)', () => {
    expect(f32(wire('7F C0 00 00'), 0)).toBeNaN();
  });
});

describe('16-bit integers', () => {
  it('s16 0xFC18 is -1000 (Victron 820 /Ac/Grid/L1/Power while exporting 1 kW)', () => {
    expect(s16(wire('FC 18'), 0)).toBe(-1000);
  });
  it('u16 0xFC18 is 64536', () => {
    expect(u16(wire('FC 18'), 0)).toBe(64536);
  });
  it('s16 0x8000 is -32768 (the SunSpec int16 not-implemented value)', () => {
    expect(s16(wire('80 00'), 0)).toBe(-32768);
  });
  it('byte order little swaps the two bytes of a register', () => {
    expect(u16(wire('34 12'), 0, { byteOrder: 'little' })).toBe(0x1234);
  });
});

describe('32-bit integers', () => {
  it('Huawei 32080 active power, I32 gain 1000: 0x00001388 is 5000 (5.000 kW)', () => {
    expect(s32(wire('00 00 13 88'), 0)).toBe(5000);
  });
  it('Huawei 37001 battery power -2000 W (discharging) is 0xFFFFF830', () => {
    expect(s32(wire('FF FF F8 30'), 0)).toBe(-2000);
  });
  it('Sungrow U32 low word first: 5017-5018 total DC power 5000 W is [0x1388, 0x0000]', () => {
    expect(u32(wire('13 88 00 00'), 0, { wordOrder: 'little' })).toBe(5000);
    expect(u32(wire('13 88 00 00'), 0)).toBe(0x13880000);
  });
  it('Sungrow S32 low word first: 13010-13011 export power -1000 W is [0xFC18, 0xFFFF]', () => {
    expect(s32(wire('FC 18 FF FF'), 0, { wordOrder: 'little' })).toBe(-1000);
  });
  it('acc32 is unsigned: 0xFFFFFFFF is 4294967295, the top before the wrap', () => {
    expect(acc32(wire('FF FF FF FF'), 0)).toBe(4294967295);
  });
});

describe('64-bit integers', () => {
  it('u64 0x0000000100000000 is 2^32', () => {
    expect(u64(wire('00 00 00 01 00 00 00 00'), 0)).toBe(4294967296);
  });
  it('u64 Wh counter 123456789012 (0x0000001CBE991A14)', () => {
    expect(u64(wire('00 00 00 1C BE 99 1A 14'), 0)).toBe(123456789012);
  });
  it('s64 all ones is -1; 0x8000000000000000 is the most negative', () => {
    expect(s64(wire('FF FF FF FF FF FF FF FF'), 0)).toBe(-1);
    expect(rawBits(wire('80 00 00 00 00 00 00 00'), 0, 4)).toBe(0x8000000000000000n);
  });
  it('u64 with little word order reverses the four words', () => {
    expect(u64(wire('1A 14 BE 99 00 1C 00 00'), 0, { wordOrder: 'little' })).toBe(123456789012);
  });
});

describe('strings and the type switch', () => {
  it("ASCII two characters per register, NUL padding trimmed: 'SUN2000-5KTL'", () => {
    const regs = wire('53 55 4E 32 30 30 30 2D 35 4B 54 4C 00 00 00 00');
    expect(str(regs, 0, 8)).toBe('SUN2000-5KTL');
  });
  it('decodeNumber reads at an offset inside a block', () => {
    const block = wire('00 00 44 79 C0 00 FC 18');
    expect(decodeNumber('f32', block, 1)).toBe(999);
    expect(decodeNumber('s16', block, 3)).toBe(-1000);
  });
});
