import { describe, expect, it } from 'vitest';
import { decodeModel } from '../../src/modbus/sunspec/decode.js';
import { discoverSunSpec, readModel } from '../../src/modbus/sunspec/discovery.js';
import { MODELS, type ModelDef } from '../../src/modbus/sunspec/models.js';
import { ascii, body, chain, ImageReader, NAN } from './sunspec-image.js';

/**
 * Byte vectors written from the published point lists (json/model_<id>.json); float32 words are
 * IEEE 754 single precision, high word first, worked out by hand:
 *   -1500.5 = C4BB 9000   12345678 = 4B3C 614E   2500.25 = 451C 4400   230 = 4366 0000
 *   50 = 4248 0000        4321.5 = 4587 0C00     987654 = 4971 2060    399.5 = 43C7 C000
 */
const model = (id: number): ModelDef => MODELS.get(id)!;

describe('float meter 213', () => {
  // A 0, PhV 8, PhVphA 10, Hz 24, W 26, WphA 28, TotWhExp 58, TotWhImp 66, Evt 122
  const regs = body(124, NAN, {
    8: [0x4366, 0x0000],
    10: [0x4366, 0x0000],
    24: [0x4248, 0x0000],
    26: [0xc4bb, 0x9000],
    58: [0x451c, 0x4400],
    66: [0x4b3c, 0x614e],
    122: [0x0000, 0x0000],
  });

  it('reads power and counters as float32 with no scale factor', () => {
    const m = decodeModel(model(213), regs).fixed;
    expect(m.W).toBe(-1500.5);
    expect(m.TotWhImp).toBe(12345678);
    expect(m.TotWhExp).toBe(2500.25);
    expect(m.PhV).toBe(230);
    expect(m.Hz).toBe(50);
    expect(m.Evt).toBe(0);
  });

  it('reads NaN (0x7FC00000) as absent, not zero', () => {
    const m = decodeModel(model(213), regs).fixed;
    expect(m.A).toBeUndefined();
    expect(m.WphA).toBeUndefined();
    expect(m.TotWhImpPhA).toBeUndefined();
    expect(m.TotVArhExpQ4phC).toBeUndefined();
  });

  it('reads any other NaN and infinities as absent too', () => {
    const odd = body(124, 0, {
      26: [0x7f80, 0x0001],
      58: [0x7f80, 0x0000],
      66: [0xff80, 0x0000],
      24: [0xffc0, 0x0000],
    });
    const m = decodeModel(model(213), odd).fixed;
    expect([m.W, m.TotWhExp, m.TotWhImp, m.Hz]).toEqual([undefined, undefined, undefined, undefined]);
    expect(m.A).toBe(0); // a real float 0.0 stays 0
  });
});

describe('float inverter 113', () => {
  // W 20, Hz 22, WH 30, DCW 36, TmpCab 38, St 46, Evt1 48
  const regs = body(60, 0, {
    0: NAN,
    20: [0x4587, 0x0c00],
    22: [0x4248, 0x0000],
    30: [0x4971, 0x2060],
    36: [0x43c7, 0xc000],
    38: NAN,
    46: [4],
    47: [0xffff],
    48: [0x0000, 0x0010],
  });

  it('decodes power, lifetime energy, DC power and state', () => {
    const m = decodeModel(model(113), regs).fixed;
    expect(m.W).toBe(4321.5);
    expect(m.Hz).toBe(50);
    expect(m.WH).toBe(987654);
    expect(m.DCW).toBe(399.5);
    expect(m.St).toBe(4);
    expect(m.Evt1).toBe(0x10);
    expect(m.A).toBeUndefined();
    expect(m.TmpCab).toBeUndefined();
    expect(m.StVnd).toBeUndefined(); // enum16 0xFFFF
  });

  it('decodes what a shorter L holds and leaves the rest absent', async () => {
    // L 32: points up to WH (offset 30, 2 registers) are there, DC values, state and events are not
    const reader = new ImageReader(chain([[113, regs.slice(0, 32)]]));
    const map = await discoverSunSpec(reader, 1);
    expect(map.models).toEqual([{ id: 113, address: 40004, length: 32 }]);
    const m = (await readModel(reader, 1, map.models[0]!)).fixed;
    expect(m.W).toBe(4321.5);
    expect(m.WH).toBe(987654);
    expect(m.DCW).toBeUndefined();
    expect(m.St).toBeUndefined();
    expect(m.EvtVnd4).toBeUndefined();
  });

  it('decodes a point cut in half by L as absent', () => {
    const m = decodeModel(model(113), regs.slice(0, 31)).fixed; // WH's low word missing
    expect(m.Hz).toBe(50);
    expect(m.WH).toBeUndefined();
  });
});

describe('DER AC measurement 701', () => {
  // St 1, ConnSt 3, DERMode 6, W 8, LNV 14, Hz 15, TotWhInj 17, TotWhAbs 21, TotVarhInj 25,
  // WL2 62, VL3 91, V_SF 112, Hz_SF 113, W_SF 114, TotWh_SF 118, MnAlrmInfo 121
  const regs = body(153, 0xffff, {
    0: [2], // ACType THREE_PHASE
    1: [1], // St ON
    2: [3], // InvSt MPPT
    3: [1], // ConnSt CONNECTED
    4: [0, 0],
    6: [0, 0],
    8: [0x0b54], // W 2900, × 10^W_SF
    9: [0x8000], // VA int16: not implemented
    12: [0x8000], // A int16: not implemented
    14: [2301],
    15: [0x0000, 0xc350], // Hz 50000 × 10^-3
    17: [0x0000, 0x0000, 0x0001, 0xe240], // TotWhInj 123456 × 10^1
    21: [0x0000, 0x0000, 0x0000, 0x0000], // TotWhAbs 0 (uint64, a real zero)
    // TotVarhInj stays FFFF FFFF FFFF FFFF: uint64 not implemented
    62: [950],
    91: [2295],
    111: [0xfffe], // A_SF -2
    112: [0xffff], // V_SF -1
    113: [0xfffd], // Hz_SF -3
    114: [0x0001], // W_SF 1
    115: [0xfffd], // PF_SF -3
    116: [0],
    117: [0],
    118: [0x0001], // TotWh_SF 1
    119: [0],
    120: [0],
    121: ascii('FAN', 32),
  });

  it('applies each scale factor, including to 32- and 64-bit points', () => {
    const m = decodeModel(model(701), regs).fixed;
    expect(m.W).toBe(2900 * 10);
    expect(m.WL2).toBe(9500);
    expect(m.LNV).toBeCloseTo(230.1, 9);
    expect(m.VL3).toBeCloseTo(229.5, 9);
    expect(m.Hz).toBeCloseTo(50, 9);
    expect(m.TotWhInj).toBe(1234560);
    expect(m.TotWhAbs).toBe(0);
    expect([m.St, m.InvSt, m.ConnSt, m.ACType]).toEqual([1, 3, 1, 2]);
    expect(m.MnAlrmInfo).toBe('FAN');
  });

  it('reads the sentinels as absent: int16 0x8000, uint16 0xFFFF, uint64 all ones', () => {
    const m = decodeModel(model(701), regs).fixed;
    expect(m.VA).toBeUndefined();
    expect(m.A).toBeUndefined();
    expect(m.TotVarhInj).toBeUndefined();
    expect(m.TotWhInjL1).toBeUndefined();
    expect(m.ThrotPct).toBeUndefined();
  });

  it('leaves a point absent when its scale factor is not implemented', () => {
    const noSf = [...regs];
    noSf[118] = 0x8000; // TotWh_SF not implemented
    const m = decodeModel(model(701), noSf).fixed;
    expect(m.TotWhInj).toBeUndefined();
    expect(m.W).toBe(29000);
  });
});

describe('status 122', () => {
  // PVConn 0, StorConn 1, ECPConn 2, ActWh 3 (acc64), WAval 29, WAval_SF 30, TmSrc 35, Tms 39
  it('decodes connection bits, the acc64 energy and the time source', () => {
    const regs = body(44, 0xffff, {
      0: [0b0111],
      1: [0],
      2: [1],
      3: [0, 0, 0x0004, 0x93e0], // 300000 Wh
      7: [0, 0, 0, 0], // ActVAh acc64 0: not accumulated → absent
      29: [5000],
      30: [0],
      35: ascii('NTP', 4),
      39: [0x2b3c, 0x4d5e],
    });
    const m = decodeModel(model(122), regs).fixed;
    expect([m.PVConn, m.StorConn, m.ECPConn]).toEqual([0b0111, 0, 1]);
    expect(m.ActWh).toBe(300000);
    expect(m.ActVAh).toBeUndefined();
    expect(m.WAval).toBe(5000);
    expect(m.TmSrc).toBe('NTP');
    expect(m.Tms).toBe(0x2b3c4d5e);
    expect(m.RtSt).toBeUndefined();
  });
});

describe('DER DC measurement 714', () => {
  // NPrt 2, DCW 4, DCW_SF 15, DCWH_SF 16; port k at 18 + 25k: PrtTyp 0, DCW 12, DCWhInj 13
  const port = (typ: number, w: number, wh: number) =>
    body(25, 0xffff, { 0: [typ], 1: [0], 2: ascii('P', 8), 12: [w], 13: [0, 0, wh >>> 16, wh & 0xffff] });

  it('decodes as many ports as NPrt says when L holds more', () => {
    const fixed = body(18, 0xffff, { 0: [0, 0], 2: [2], 4: [1200], 15: [0], 16: [0] });
    const regs = [...fixed, ...port(0, 700, 90000), ...port(1, 0xfe0c, 5000), ...port(0, 1, 1)];
    const m = decodeModel(model(714), regs);
    expect(m.repeating).toHaveLength(2);
    expect(m.repeating.map((p) => [p.PrtTyp, p.DCW, p.DCWhInj])).toEqual([
      [0, 700, 90000],
      [1, -500, 5000],
    ]);
    expect(m.fixed.DCW).toBe(1200);
  });

  it('falls back to what L holds when NPrt is not implemented', () => {
    const fixed = body(18, 0xffff, { 15: [0], 16: [0] });
    const m = decodeModel(model(714), [...fixed, ...port(0, 10, 1), ...port(0, 20, 2)]);
    expect(m.repeating.map((p) => p.DCW)).toEqual([10, 20]);
  });
});

describe('64-bit and count types', () => {
  const def: ModelDef = {
    id: 64999,
    name: 'test_types',
    fixed: [
      { name: 'I', type: 'int64', size: 4 },
      { name: 'U', type: 'uint64', size: 4 },
      { name: 'Acc', type: 'acc64', size: 4 },
      { name: 'N', type: 'count', size: 1 },
    ],
  };

  it('decodes values and the not-implemented patterns of int64, uint64, acc64 and count', () => {
    const values = decodeModel(def, [0xffff, 0xffff, 0xffff, 0xfffe, 0, 0, 0x0001, 0x0000, 0, 0, 0, 7, 3]).fixed;
    expect(values).toEqual({ I: -2, U: 65536, Acc: 7, N: 3 });
    const absent = decodeModel(def, [0x8000, 0, 0, 0, 0xffff, 0xffff, 0xffff, 0xffff, 0, 0, 0, 0, 0xffff]).fixed;
    expect(absent).toEqual({ I: undefined, U: undefined, Acc: undefined, N: undefined });
  });
});
