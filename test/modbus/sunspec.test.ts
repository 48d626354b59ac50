import { describe, expect, it } from 'vitest';
import type { RegisterReader } from '../../src/core/register-reader.js';
import { ModbusError } from '../../src/modbus/errors.js';
import { discoverSunSpec, readModel } from '../../src/modbus/sunspec/discovery.js';
import { gridStateOf } from '../../src/profiles/sunspec.js';
import { ascii, ImageReader } from './sunspec-image.js';

/**
 * Register images written by hand from the SunSpec model definitions (offsets counted from the
 * first register after ID/L, as listed for model 203: W at 16, W_SF 20, TotWhExp 36,
 * TotWhImp 44, TotWh_SF 52, Evt 103; model 1: Mn 0..15, Md 16..31, SN 48..63), not produced
 * by the gateway's own encoder.
 */
function meterImage(base: number, opts: { w: number; wSf: number; evt?: number; imp?: number; phv?: number }) {
  const m1 = [
    ...ascii('ACME', 16),
    ...ascii('M-3000', 16),
    ...ascii('', 8),
    ...ascii('1.2', 8),
    ...ascii('SN42', 16),
    1,
    0x8000,
  ];
  const m203 = new Array<number>(105).fill(0);
  m203.fill(0x8000, 0, 36); // int16 points: not implemented
  m203[5] = opts.phv ?? 2300; // PhV
  m203[6] = opts.phv ?? 2300;
  m203[7] = opts.phv ?? 2300;
  m203[8] = opts.phv ?? 2300;
  m203[13] = 0xffff; // V_SF = -1
  m203[16] = opts.w & 0xffff; // W
  m203[20] = opts.wSf & 0xffff; // W_SF
  m203[36] = 0; // TotWhExp hi
  m203[37] = 500; // TotWhExp lo
  m203[44] = (opts.imp ?? 0x10000) >>> 16; // TotWhImp hi
  m203[45] = (opts.imp ?? 0x10000) & 0xffff; // TotWhImp lo
  m203[52] = 0; // TotWh_SF
  m203[103] = ((opts.evt ?? 0) >>> 16) & 0xffff;
  m203[104] = (opts.evt ?? 0) & 0xffff;
  const regs = [0x5375, 0x6e53, 1, 66, ...m1, 203, 105, ...m203, 0xffff, 0];
  const map = new Map<number, number>();
  regs.forEach((v, i) => map.set(base + i, v));
  return map;
}

describe('SunSpec discovery and decoding', () => {
  it('finds the marker at 40000, walks the chain and decodes identity, scale factors and acc32', async () => {
    const reader = new ImageReader(meterImage(40000, { w: -1234, wSf: -1 }));
    const map = await discoverSunSpec(reader, 1);
    expect(map.base).toBe(40000);
    expect(map.models.map((m) => [m.id, m.address, m.length])).toEqual([
      [1, 40004, 66],
      [203, 40072, 105],
    ]);
    const common = await readModel(reader, 1, map.models[0]!);
    expect(common.fixed.Mn).toBe('ACME');
    expect(common.fixed.Md).toBe('M-3000');
    expect(common.fixed.SN).toBe('SN42');
    const meter = await readModel(reader, 1, map.models[1]!);
    expect(meter.fixed.W).toBeCloseTo(-123.4, 6);
    expect(meter.fixed.TotWhImp).toBe(65536);
    expect(meter.fixed.TotWhExp).toBe(500);
    // not-implemented int16 points are absent, not zero
    expect(meter.fixed.A).toBeUndefined();
    expect(meter.fixed.Hz).toBeUndefined();
  });

  it('falls back to base 0 when 40000 answers with an illegal-address exception', async () => {
    const reader = new ImageReader(meterImage(0, { w: 10, wSf: 0 }));
    const map = await discoverSunSpec(reader, 1);
    expect(map.base).toBe(0);
    expect(map.models.map((m) => m.id)).toEqual([1, 203]);
  });

  it('says so when no base has the SunS marker', async () => {
    const reader = new ImageReader(
      new Map([
        [40000, 1],
        [40001, 2],
        [0, 3],
        [1, 4],
        [50000, 5],
        [50001, 6],
      ]),
    );
    await expect(discoverSunSpec(reader, 1)).rejects.toMatchObject({
      kind: 'decode',
      message: expect.stringContaining('SunS'),
    });
  });

  it('an exception answer at every SunSpec base is that exception (with its code), not a decode problem', async () => {
    // issue 27 finding 11: a unit that refuses the marker read was counted as `decode`
    const reader = new ImageReader(new Map());
    await expect(discoverSunSpec(reader, 1)).rejects.toMatchObject({
      kind: 'exception',
      exceptionCode: 2,
      message: expect.stringContaining('SunSpec marker'),
    });
  });

  it('passes a timeout through instead of trying other bases', async () => {
    const silent = async (): Promise<number[]> => {
      throw new ModbusError('timeout', 'no answer');
    };
    const reader: RegisterReader = { readHolding: silent, readInput: silent };
    await expect(discoverSunSpec(reader, 1)).rejects.toMatchObject({ kind: 'timeout' });
  });

  it('treats an out-of-range scale factor as unusable rather than scaling by it', async () => {
    const reader = new ImageReader(meterImage(40000, { w: 100, wSf: 11 }));
    const map = await discoverSunSpec(reader, 1);
    const meter = await readModel(reader, 1, map.models[1]!);
    expect(meter.fixed.W).toBeUndefined();
  });

  it('derives the relay state from the power-failure event bit and from a dead voltage', async () => {
    for (const [opts, state] of [
      [{ evt: 0 }, 'ok'],
      [{ evt: 1 << 2 }, 'not_present'],
      [{ evt: 0, phv: 0 }, 'not_present'],
    ] as const) {
      const reader = new ImageReader(meterImage(40000, { w: 0, wSf: 0, ...opts }));
      const map = await discoverSunSpec(reader, 1);
      const meter = await readModel(reader, 1, map.models[1]!);
      expect(gridStateOf(meter.fixed)).toBe(state);
    }
  });
});
