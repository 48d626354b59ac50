import { describe, expect, it } from 'vitest';
import type { Reading } from '../../src/core/channels.js';
import { ModbusError } from '../../src/modbus/errors.js';
import { discoverSunSpec } from '../../src/modbus/sunspec/discovery.js';
import { SunSpecDevice } from '../../src/profiles/sunspec.js';
import { withoutScales } from '../support/counter-scales.js';
import { body, chain, common, device, ImageReader, NAN } from './sunspec-image.js';

/**
 * The SunSpec roles end to end over hand-built register images (offsets from the published
 * point lists, json/model_<id>.json): which model each role reads, design.md's signs, counters
 * and sentinels absent rather than zero, and the relay state at the connection point.
 */
const T = 1_750_000_000_000;
type Model = [number, number[]];

async function poll(role: Parameters<typeof device>[0], models: Model[], opts?: { end?: boolean }) {
  const dev = new SunSpecDevice(device(role, 'dev'));
  const reader = new ImageReader(chain([common('ACME', 'HYB-10', 'SN-77', '2.1'), ...models], opts));
  const result = await dev.poll(reader, () => T);
  const by = new Map<string, Reading>(result.readings.map((r) => [r.streamId, r]));
  return { dev, result, by, reader };
}

// ---- models, written at the published offsets ----

/** 213: W 26, PhV 8, PhVphA..C 10..14, TotWhExp 58, TotWhImp 66, Evt 122; everything else NaN */
function m213(
  o: { w?: readonly number[]; volts?: readonly number[]; exp?: readonly number[]; evt?: number } = {},
): Model {
  const v = o.volts ?? [0x4366, 0x0000]; // 230 V
  return [
    213,
    body(124, NAN, {
      8: v,
      10: v,
      12: v,
      14: v,
      26: o.w ?? [0xc4bb, 0x9000], // -1500.5 W: exporting
      58: o.exp ?? [0x451c, 0x4400], // 2500.25 Wh exported
      66: [0x4b3c, 0x614e], // 12345678 Wh imported
      122: [(o.evt ?? 0) >>> 16, (o.evt ?? 0) & 0xffff],
    }),
  ];
}

/** 113: W 20, WH 30, DCW 36 */
const m113: Model = [113, body(60, NAN, { 20: [0x4587, 0x0c00], 30: [0x4971, 0x2060], 36: [0x45a0, 0x0000], 46: [4] })]; // 4321.5 W, 987654 Wh, 5120 W DC

/** 103 (integer): W 12 with W_SF 13, WH 22 with WH_SF 24 */
const m103: Model = [103, body(50, 0xffff, { 12: [1000], 13: [0], 22: [0, 10], 24: [0] })];

/** 160 with two modules: fixed 8 (DCA_SF 0, DCV_SF 1, DCW_SF 2, DCWH_SF 3, N 6), module k at 8 + 20k: DCA 9, DCV 10, DCW 11, DCWH 12 */
const m160: Model = [
  160,
  [
    ...body(8, 0, { 4: [0, 0], 6: [2], 7: [0] }),
    ...body(20, 0, { 0: [1], 9: [5], 10: [400], 11: [2000], 12: [0, 5000] }),
    ...body(20, 0, { 0: [2], 9: [8], 10: [375], 11: [3000], 12: [0, 7000] }),
  ],
];

/** 701: St 1, ConnSt 3, DERMode 6, W 8, TotWhInj 17, TotWhAbs 21, TmpCab 34, TmpSnk 35, W_SF 114, TotWh_SF 118, Tmp_SF 120 */
function m701(o: { st?: number; conn?: number; mode?: number } = {}): Model {
  return [
    701,
    body(153, 0xffff, {
      1: [o.st ?? 1],
      3: [o.conn ?? 1],
      6: [0, o.mode ?? 0],
      8: [0xfe0c], // W -500 × 10 = -5000: absorbing (charging the battery from the grid)
      17: [0, 0, 0, 40000], // TotWhInj 40000 × 10
      21: [0, 0, 0, 1500], // TotWhAbs 1500 × 10
      34: [0x8000], // TmpCab not implemented
      35: [45], // TmpSnk 45 °C (Tmp_SF 120: 0)
      111: [0],
      112: [0xffff],
      113: [0xfffe],
      114: [1],
      115: [0xfffd],
      116: [0],
      117: [0],
      118: [1],
      119: [0],
      120: [0],
    }),
  ];
}

/** 714: NPrt 2, DCW 4 (total), DCW_SF 15, DCWH_SF 16; port k at 18 + 25k: PrtTyp 0, DCW 12, DCWhInj 13 */
function m714(types: number[]): Model {
  const port = (typ: number, w: number, wh: number) => body(25, 0xffff, { 0: [typ], 12: [w], 13: [0, 0, 0, wh] });
  return [
    714,
    [
      ...body(18, 0xffff, { 2: [types.length], 4: [3100], 13: [0], 14: [0], 15: [0], 16: [0], 17: [0] }),
      ...types.flatMap((t, k) => port(t, 1000 * (k + 1), 100 * (k + 1))),
    ],
  ];
}

/** 802: WHRtg 1, SoC 9, SoH 11, State 20, V 32, A 42, W 45, WHRtg_SF 51, SoC_SF 54, SoH_SF 56, V_SF 57, A_SF 59, W_SF 61 */
const m802 = (soc = 655, state = 3): Model => [
  802,
  body(62, 0xffff, {
    1: [1000],
    9: [soc],
    11: [980],
    20: [state], // State 3 CONNECTED
    32: [512], // V 51.2 V
    42: [0xff3d], // A -195 × 0.1 = -19.5 A (discharge-positive, like W)
    45: [0xfc18],
    51: [1],
    54: [0xffff],
    56: [0xffff],
    57: [0xffff],
    59: [0xffff],
    61: [0],
  }),
];

/**
 * 803 (json/model_803.json): NStr 0, ModTmpMax 2, ModTmpMin 5, ModTmpAvg 8, ModTmp_SF 21; 26 fixed
 * registers, then 32 per string (one string here, filled with its not-implemented 0xFFFF)
 */
const m803 = (tmpMax = 312, sf = 0xffff): Model => [
  803,
  [...body(26, 0xffff, { 0: [1], 1: [1], 2: [tmpMax], 5: [0x00f5], 8: [27], 21: [sf] }), ...body(32, 0xffff)],
];

/** 804 (json/model_804.json): Idx 0, ModTmpMax 18, ModTmpMin 20, ModTmpAvg 22, ModTmp_SF 42; 46 fixed registers */
const m804 = (idx: number, tmpMax: number): Model => [
  804,
  body(46, 0xffff, { 0: [idx], 18: [tmpMax], 20: [tmpMax - 30], 22: [tmpMax - 10], 42: [0xffff] }),
];

/** 124: WChaMax 0, ChaState 6, OutWRte 10, InWRte 11, WChaMax_SF 16, ChaState_SF 20, InOutWRte_SF 23 */
const m124 = (chaState = 4210): Model => [
  124,
  body(24, 0xffff, { 0: [5000], 6: [chaState], 10: [0x8000], 11: [2500], 16: [0], 20: [0xfffe], 23: [0xfffe] }),
];

/** 120: WHRtg 17, WHRtg_SF 18 */
const m120: Model = [120, body(26, 0xffff, { 17: [960], 18: [1] })];

/** 122: PVConn 0, StorConn 1, ECPConn 2 */
const m122 = (pv: number, stor: number, ecp: number): Model => [
  122,
  body(44, 0xffff, { 0: [pv], 1: [stor], 2: [ecp] }),
];

/** 203 (integer): PhV 5..8 with V_SF 13, W 16 with W_SF 20, TotWhExp 36, TotWhImp 44, TotWh_SF 52, Evt 103 */
const m203: Model = [
  203,
  body(105, 0x8000, {
    5: [2300, 2300, 2300, 2300],
    13: [0xffff],
    16: [800],
    20: [0],
    36: [0, 10],
    44: [0, 20],
    52: [0],
    103: [0, 0],
  }),
];

describe('SunSpec roles', () => {
  it('takes identity from model 1 for every role', async () => {
    const { dev } = await poll('consumption-meter', [m213()]);
    expect(dev.identity).toEqual({ manufacturer: 'ACME', model: 'HYB-10', serial: 'SN-77', version: '2.1' });
  });

  describe('float meter 213', () => {
    it('grid meter: power + importing, float counters, relay ok', async () => {
      const { by } = await poll('grid-meter', [m213()]);
      const r = by.get('dev__GRID_METER_DERIVED')!;
      // PhVphA..C 230 V: the live channels (docs/design.md "Live channels"); Hz, A and WphX are NaN here
      expect(r.values).toEqual({
        power_W: -1500.5,
        state: 'ok',
        voltage_L1_V: 230,
        voltage_L2_V: 230,
        voltage_L3_V: 230,
      });
      expect(withoutScales(r.counters)).toEqual({ inWh: 12345678, outWh: 2500.25 });
    });

    it('a NaN counter is absent, not zero', async () => {
      const { by } = await poll('consumption-meter', [m213({ exp: NAN, w: NAN })]);
      const r = by.get('dev')!;
      expect(r.values).toEqual({ voltage_L1_V: 230, voltage_L2_V: 230, voltage_L3_V: 230 });
      expect(withoutScales(r.counters)).toEqual({ inWh: 12345678 });
    });

    it('a negative float counter is a device fault and stays absent', async () => {
      const { by } = await poll('consumption-meter', [m213({ exp: [0xc4bb, 0x9000] })]);
      expect(withoutScales(by.get('dev')!.counters)).toEqual({ inWh: 12345678 });
    });

    it('relay not_present from the power-failure bit or from dead voltage', async () => {
      expect((await poll('grid-meter', [m213({ evt: 1 << 2 })])).by.get('dev__GRID_METER_DERIVED')!.values.state).toBe(
        'not_present',
      );
      expect(
        (await poll('grid-meter', [m213({ volts: [0, 0] })])).by.get('dev__GRID_METER_DERIVED')!.values.state,
      ).toBe('not_present');
    });

    it('prefers the integer meter when a device has both', async () => {
      const { by } = await poll('consumption-meter', [m213(), m203]);
      expect(by.get('dev')!.values.power_W).toBe(800);
      expect(withoutScales(by.get('dev')!.counters)).toEqual({ inWh: 20, outWh: 10 });
    });
  });

  describe('inverter', () => {
    it('float 113 with 160: AC − while delivering, DC in, WH as delivered energy, PV modules', async () => {
      const { by, result } = await poll('inverter', [m113, m160]);
      // St 4 = MPPT: running
      expect(by.get('dev')!.values).toEqual({ power_AC_W: -4321.5, power_DC_W: 5120, status: 'running' });
      expect(withoutScales(by.get('dev')!.counters)).toEqual({ outWh: 987654 });
      // each string's voltage and current (the live channels): 400 V × 5 A, 375 V × 8 A
      expect(by.get('dev__pv1')!.values).toEqual({ power_W: -2000, voltage_DC_V: 400, current_DC_A: 5 });
      expect(by.get('dev__pv2')!.values).toEqual({ power_W: -3000, voltage_DC_V: 375, current_DC_A: 8 });
      expect(withoutScales(by.get('dev__pv2')!.counters)).toEqual({ outWh: 7000 });
      expect(by.get('dev__dcm')!.values).toEqual({ power_W: -5000 });
      expect(withoutScales(by.get('dev__dcm')!.counters)).toEqual({ outWh: 12000 });
      expect(result.pvModules).toBe(2);
    });

    it('701 with 714: scaled AC power and both counters, DC from 714, PV only from PV ports', async () => {
      const { by, result } = await poll('inverter', [m701(), m714([0, 1, 0])]);
      const inv = by.get('dev')!;
      // 701: the heat sink's temperature (the cabinet's is not implemented); its St is 701's own, not read as a status
      expect(inv.values).toEqual({ power_AC_W: 5000, power_DC_W: 3100, temperature_C: 45 });
      expect(withoutScales(inv.counters)).toEqual({ inWh: 15000, outWh: 400000 });
      expect(result.pvModules).toBe(2);
      expect(by.get('dev__pv1')!.values).toEqual({ power_W: -1000 });
      expect(by.get('dev__pv2')!.values).toEqual({ power_W: -3000 }); // the third port; the second is a battery
      expect(withoutScales(by.get('dev__pv2')!.counters)).toEqual({ outWh: 300 });
      expect(by.get('dev__dcm')!.values).toEqual({ power_W: -4000 });
    });

    it('takes PV from 160 over 714, and DC power from 714 when the AC model has none', async () => {
      const { by, result } = await poll('inverter', [m714([0, 0, 0]), m701(), m160]);
      expect(result.pvModules).toBe(2);
      expect(by.get('dev__dcm')!.values).toEqual({ power_W: -5000 });
      expect(by.get('dev')!.values.power_DC_W).toBe(3100);
    });

    it('prefers 701 over 113 over 103, whatever the chain order', async () => {
      expect((await poll('inverter', [m103, m113, m701()])).by.get('dev')!.values.power_AC_W).toBe(5000);
      expect((await poll('inverter', [m103, m113])).by.get('dev')!.values.power_AC_W).toBe(-4321.5);
      expect((await poll('inverter', [m103])).by.get('dev')!.values.power_AC_W).toBe(-1000);
    });
  });

  describe('battery', () => {
    it('802: power + charging, SoC, SoH and capacity', async () => {
      const { by, result } = await poll('battery', [m124(), m802()]);
      // V, A as a magnitude, State 3 CONNECTED = running
      expect(by.get('dev')!.values).toEqual({
        power_W: 1000,
        soc: 65.5,
        soh: 98,
        voltage_DC_V: 51.2,
        current_DC_A: 19.5,
        status: 'running',
      });
      expect(result.capacityWh).toBe(10000);
    });

    it("802 State outside the model's enumeration reads unknown with its code; not implemented (0xFFFF) reads none", async () => {
      // json/model_802.json State: 1 DISCONNECTED … 6 SUSPENDING, 99 FAULT; 7 is none of them
      expect((await poll('battery', [m802(655, 7)])).by.get('dev')!.values.status).toBe('unknown (code 7)');
      expect((await poll('battery', [m802(655, 99)])).by.get('dev')!.values.status).toBe('fault');
      expect((await poll('battery', [m802(655, 0xffff)])).by.get('dev')!.values).not.toHaveProperty('status');
    });

    it("temperature: 803's hottest module, scaled by ModTmp_SF; neither its strings nor a later 804 are read", async () => {
      // ModTmpMax 312 x 10^-1 = 31.2 degC (ModTmpAvg 27 has no scale factor in 803: not read)
      const { by, reader } = await poll('battery', [m802(), m803(), m804(1, 450)]);
      expect(by.get('dev')!.values.temperature_C).toBe(31.2);
      // 0xFF38 = -200 x 10^-1 = -20 degC: int16, below zero
      expect((await poll('battery', [m802(), m803(0xff38)])).by.get('dev')!.values.temperature_C).toBe(-20);
      const dev = new SunSpecDevice(device('battery', 'dev'));
      await dev.poll(reader, () => T);
      const before = reader.reads;
      await dev.poll(reader, () => T);
      // 802, then 803's 26 fixed registers: one read each
      expect(reader.reads - before).toBe(2);
    });

    it("temperature without 803: the hottest string's 804 ModTmpMax", async () => {
      // 28.5 and 33.0 degC (ModTmp_SF -1)
      const { by } = await poll('battery', [m802(), m804(1, 285), m804(2, 330)]);
      expect(by.get('dev')!.values.temperature_C).toBe(33);
    });

    it('temperature absent, not 0, when 803 leaves it unimplemented or its scale factor is', async () => {
      expect((await poll('battery', [m802(), m803(0x8000)])).by.get('dev')!.values).not.toHaveProperty('temperature_C');
      expect((await poll('battery', [m802(), m803(312, 0x8000)])).by.get('dev')!.values).not.toHaveProperty(
        'temperature_C',
      );
      expect((await poll('battery', [m802()])).by.get('dev')!.values).not.toHaveProperty('temperature_C');
    });

    it('124 when there is no 802: SoC from ChaState, no power (InWRte/OutWRte are setpoints), capacity from 120', async () => {
      const { by, result, reader } = await poll('battery', [m120, m124()]);
      expect(by.get('dev')!.values).toEqual({ soc: 42.1 });
      expect(by.get('dev')!.counters).toBeUndefined();
      expect(result.capacityWh).toBe(9600);
      // the nameplate is read once, not on every poll
      const dev = new SunSpecDevice(device('battery', 'dev'));
      await dev.poll(reader, () => T);
      const afterFirst = reader.reads;
      await dev.poll(reader, () => T);
      expect(reader.reads - afterFirst).toBe(1);
    });

    it('a SoC outside 0..100 % is absent', async () => {
      expect((await poll('battery', [m124(12000)])).by.get('dev')!.values).toEqual({});
      expect((await poll('battery', [m802(1200)])).by.get('dev')!.values.soc).toBeUndefined();
    });
  });

  describe('relay state from an inverter at the connection point', () => {
    const state = async (models: Model[]) =>
      (await poll('grid-meter', models)).by.get('dev__GRID_METER_DERIVED')!.values.state;
    const OPERATING = 1 << 2;

    it('122: ECPConn connected → ok; disconnected while operating → not_present; disconnected and idle → unknown', async () => {
      expect(await state([m122(OPERATING | 1, 0, 1)])).toBe('ok');
      expect(await state([m122(OPERATING | 1, 0, 0)])).toBe('not_present');
      expect(await state([m122(0, OPERATING, 0)])).toBe('not_present');
      expect(await state([m122(0b0010, 0, 0)])).toBe('unknown');
    });

    it('701: connected → ok; on and disconnected, or grid-forming → not_present; off and disconnected → unknown', async () => {
      expect(await state([m701()])).toBe('ok');
      expect(await state([m701({ conn: 0 })])).toBe('not_present');
      expect(await state([m701({ mode: 1 << 1 })])).toBe('not_present');
      expect(await state([m701({ st: 0, conn: 0 })])).toBe('unknown');
    });

    it('a loss seen by either the meter or the inverter wins', async () => {
      expect(await state([m203, m701({ mode: 1 << 1 })])).toBe('not_present');
      expect(await state([m213({ evt: 1 << 2 }), m122(0, 0, 1)])).toBe('not_present');
      expect(await state([m203, m701({ st: 0, conn: 0 })])).toBe('ok');
    });

    it('without a meter model the stream carries the state only', async () => {
      const { by } = await poll('grid-meter', [m122(OPERATING, 0, 1)]);
      expect(by.get('dev__GRID_METER_DERIVED')!.values).toEqual({ state: 'ok' });
      expect(by.get('dev__GRID_METER_DERIVED')!.counters).toBeUndefined();
    });
  });

  it('names the models a device lacks for its role', async () => {
    await expect(poll('battery', [m213()])).rejects.toMatchObject({
      kind: 'decode',
      message: expect.stringMatching(/none of the SunSpec models a battery needs \(802, 124\); it has 1, 213/),
    });
  });
});

describe('SunSpec chain walk', () => {
  it('skips models it does not know and reads the ones after them', async () => {
    const vendor: Model = [64001, body(10, 0x1234)];
    const unknown: Model = [65, body(3, 0)];
    const { by, reader } = await poll('consumption-meter', [vendor, unknown, m213()]);
    expect(by.get('dev')!.values.power_W).toBe(-1500.5);
    const map = await discoverSunSpec(reader, 1);
    expect(map.models.map((m) => [m.id, m.length])).toEqual([
      [1, 66],
      [64001, 10],
      [65, 3],
      [213, 124],
    ]);
  });

  it('ends a chain without end marker at the first address the device refuses', async () => {
    const reader = new ImageReader(chain([common(), m213()], { end: false }));
    const map = await discoverSunSpec(reader, 1);
    expect(map.models.map((m) => m.id)).toEqual([1, 213]);
    const { by } = await poll('grid-meter', [m213()], { end: false });
    expect(by.get('dev__GRID_METER_DERIVED')!.values.state).toBe('ok');
  });

  it('ends a chain that runs into zeros instead of an end marker', async () => {
    const image = chain([common(), m213()], { end: false });
    const last = Math.max(...image.keys());
    for (let a = last + 1; a <= last + 40; a++) image.set(a, 0);
    const map = await discoverSunSpec(new ImageReader(image), 1);
    expect(map.models.map((m) => m.id)).toEqual([1, 213]);
  });

  it('gives up on a chain that never ends after a bounded number of reads', async () => {
    // every address answers 64001, 0: an endless run of empty vendor models
    const endless = { reads: 0 } as { reads: number };
    const reader = {
      readInput: () => Promise.reject(new ModbusError('exception', 'illegal function', 1)),
      readHolding: async (_u: number, address: number, length: number) => {
        endless.reads++;
        if (address === 40000) return [0x5375, 0x6e53].slice(0, length);
        return Array.from({ length }, (_, k) => ((address + k) % 2 === 0 ? 64001 : 0));
      },
    };
    await expect(discoverSunSpec(reader, 1)).rejects.toMatchObject({
      kind: 'decode',
      message: expect.stringContaining('no end marker'),
    });
    expect(endless.reads).toBeLessThanOrEqual(66);
  });

  it('does not take a refused first header for the end of an empty chain', async () => {
    const reader = new ImageReader(
      new Map([
        [40000, 0x5375],
        [40001, 0x6e53],
      ]),
    );
    await expect(discoverSunSpec(reader, 1)).rejects.toMatchObject({ kind: 'exception' });
  });
});
