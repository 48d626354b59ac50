import { describe, expect, it } from 'vitest';
import { MODEL_1, MODEL_160, MODEL_203, MODEL_802 } from '../../src/modbus/sunspec/models.js';
import { ModbusException, RegisterBank } from '../../src/sim/bank.js';
import { SunSpecImage } from '../../src/sim/sunspec-encoder.js';

describe('RegisterBank', () => {
  it('reads inside and throws exception 2 for anything outside', () => {
    const b = new RegisterBank(100, 4);
    b.write(100, [1, 2, 3, 4]);
    expect(b.read(101, 3)).toEqual([2, 3, 4]);
    for (const [addr, len] of [
      [99, 1],
      [103, 2],
      [104, 1],
      [100, 0],
    ] as const) {
      let err: unknown;
      try {
        b.read(addr, len);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ModbusException);
      expect((err as ModbusException).modbusErrorCode).toBe(2);
    }
  });
});

describe('SunSpecImage', () => {
  const img = () =>
    new SunSpecImage([{ def: MODEL_1 }, { def: MODEL_160, repeats: 2 }, { def: MODEL_802 }, { def: MODEL_203 }]);

  it('lays out SunS, headers, sentinels and the end marker', () => {
    const r = img().bank.read(40000, 2 + 68 + (2 + 8 + 40) + 64 + 107 + 2);
    expect(r.slice(0, 2)).toEqual([0x5375, 0x6e53]);
    expect(r.slice(2, 4)).toEqual([1, 66]);
    expect(r.slice(4, 68).every((x) => x === 0)).toBe(true); // Mn, Md, Opt, Vr, SN: empty strings
    expect(r[68]).toBe(0xffff); // DA uint16
    expect(r[69]).toBe(0x8000); // Pad
    expect(r.slice(70, 72)).toEqual([160, 48]);
    expect(r.slice(72, 76)).toEqual([0x8000, 0x8000, 0x8000, 0x8000]); // SFs
    expect(r.slice(76, 78)).toEqual([0xffff, 0xffff]); // Evt bitfield32
    const m802 = 70 + 2 + 48;
    expect(r.slice(m802, m802 + 2)).toEqual([802, 62]);
    expect(r.slice(m802 + 2 + 12, m802 + 2 + 14)).toEqual([0xffff, 0xffff]); // NCyc uint32
    expect(r[m802 + 2 + 45]).toBe(0x8000); // W int16
    const m203 = m802 + 64;
    expect(r.slice(m203, m203 + 2)).toEqual([203, 105]);
    expect(r.slice(m203 + 2 + 36, m203 + 2 + 38)).toEqual([0, 0]); // acc32 not implemented = 0
    expect(r.slice(-2)).toEqual([0xffff, 0]);
  });

  it('encodes scaled, signed, 32-bit, accumulating and string points', () => {
    const image = img();
    const m = image.model(802);
    m.sf('W_SF', 0).sf('SoC_SF', -1).sf('WHRtg_SF', 1);
    m.point('W').set(-1234.4);
    m.point('SoC').set(55.55);
    m.point('WHRtg').set(120_000);
    m.point('NCyc').set(70_000);
    const base = 40002 + 68 + 50 + 2;
    const r = image.bank.read(base, 62);
    expect(r[45]).toBe(0x10000 - 1234);
    expect(r[9]).toBe(556);
    expect(r[1]).toBe(12_000);
    expect([r[12], r[13]]).toEqual([1, 70_000 - 0x10000]);
    expect(r[54]).toBe(0x10000 - 1);

    const meter = image.model(203);
    meter.sf('TotWh_SF', 0);
    meter.point('TotWhImp').set(0x100000000 + 5.9); // rolls over like a real accumulator, floored
    const mr = image.bank.read(40002 + 68 + 50 + 64 + 2, 105);
    expect([mr[44], mr[45]]).toEqual([0, 5]);

    const pv = image.model(160);
    pv.blockPoint(1, 'IDStr').text('PV2');
    const pr = image.bank.read(40002 + 68 + 2 + 8 + 20, 20);
    expect(pr.slice(1, 9)).toEqual([0x5056, 0x3200, 0, 0, 0, 0, 0, 0]);
  });

  it('keeps real values off the sentinels and refuses a scaled point without its SF', () => {
    const image = img();
    const m = image.model(802);
    expect(() => m.point('SoC').set(50)).toThrow(/SoC_SF/);
    m.sf('W_SF', 0);
    m.point('W').set(-99_999);
    m.point('AlmRst').set(70_000); // uint16: clamps below 0xFFFF
    const r = image.bank.read(40002 + 68 + 50 + 2, 62);
    expect(r[45]).toBe(0x8001);
    expect(r[18]).toBe(0xfffe);
  });
});
