/**
 * The profile engine on the shipped profiles, fed register values written out from the public
 * register documents (what the device would send for a known quantity), so an expected reading
 * comes from the document, not from the decoder.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { DeviceConfig, DeviceRole } from '../../src/config/types.js';
import { ModbusError } from '../../src/modbus/errors.js';
import type { DeviceProfile } from '../../src/profiles/compiled.js';
import { ProfileDevice } from '../../src/profiles/engine.js';
import { loadProfiles, type ProfileRegistry } from '../../src/profiles/registry.js';
import { withoutScales } from '../support/counter-scales.js';
import { BankReader } from './bank.js';

let registry: ProfileRegistry;
beforeAll(() => {
  registry = loadProfiles();
});

function device(profile: string | DeviceProfile, role: DeviceRole, unitId = 1): ProfileDevice {
  const p = typeof profile === 'string' ? registry.get(profile)! : profile;
  const config: DeviceConfig = {
    id: 'dev',
    role,
    profile: p.name,
    connection: { type: 'tcp', host: '127.0.0.1', port: 502, unitId, timeoutMs: 1000 },
  };
  return new ProfileDevice(config, p);
}

const at = (t: number) => () => t;

/** fill defined-but-unused registers a request may span (the device answers them) */
function zeros(bank: BankReader, fn: 'holding' | 'input', from: number, to: number, unit = 1): void {
  for (let a = from; a < to; a++) bank.set(fn, a, '00 00', unit);
}

describe('Eastron SDM630 as grid meter (input registers, f32)', () => {
  const bank = () =>
    new BankReader()
      .set('input', 0x0000, '43 66 00 00') // 230.0 V
      .set('input', 0x0002, '43 66 00 00')
      .set('input', 0x0004, '43 66 00 00')
      .set('input', 0x0034, '44 79 C0 00') // total system power 999.0 W
      .set('input', 0x0048, '46 1C 40 00') // total import 10000.0 kWh
      .set('input', 0x004a, '44 7A 00 00'); // total export 1000.0 kWh

  it('reads power, both counters in Wh and the grid state', async () => {
    const dev = device('eastron-sdm630', 'grid-meter');
    const poll = await dev.poll(bank(), at(1000));
    // an SDM630 without the V2 serial register: identity from the profile only
    expect(dev.identity).toEqual({ manufacturer: 'Eastron', model: 'SDM630' });
    expect(withoutScales(poll.readings)).toEqual([
      {
        streamId: 'dev__GRID_METER_DERIVED',
        ts: 1000,
        // the phase voltages are live channels too (docs/design.md "Live channels")
        values: { power_W: 999, state: 'ok', voltage_L1_V: 230, voltage_L2_V: 230, voltage_L3_V: 230 },
        counters: { inWh: 10_000_000, outWh: 1_000_000 },
      },
    ]);
  });

  it('reads the live channels the document lists: frequency, and per phase volts, amps and watts', async () => {
    const b = bank()
      .set('input', 0x0046, '42 48 00 00') // 30071 frequency 50.0 Hz
      .set('input', 0x0006, '40 20 00 00') // 30007 phase 1 current 2.5 A
      .set('input', 0x0008, '40 40 00 00') // 30009 phase 2 current 3.0 A
      .set('input', 0x000a, '3F C0 00 00') // 30011 phase 3 current 1.5 A
      .set('input', 0x000c, '44 0F C0 00') // 30013 phase 1 power 575.0 W
      .set('input', 0x000e, '43 FA 00 00') // 30015 phase 2 power 500.0 W
      .set('input', 0x0010, 'C3 48 00 00'); // 30017 phase 3 power -200.0 W (exporting)
    const poll = await device('eastron-sdm630', 'grid-meter').poll(b, at(0));
    expect(poll.readings[0]!.values).toMatchObject({
      frequency_Hz: 50,
      current_L1_A: 2.5,
      current_L2_A: 3,
      current_L3_A: 1.5,
      power_L1_W: 575,
      power_L2_W: 500,
      power_L3_W: -200,
    });
    // the voltages the grid state reads already are not asked for twice; the live ones travel apart
    expect(b.requests.slice(1)).toEqual([
      { fn: 'input', unit: 1, address: 0x0000, count: 6 },
      { fn: 'input', unit: 1, address: 0x0034, count: 2 },
      { fn: 'input', unit: 1, address: 0x0048, count: 4 },
      { fn: 'input', unit: 1, address: 0x0006, count: 12 },
      { fn: 'input', unit: 1, address: 0x0046, count: 2 },
    ]);
  });

  it('a meter that refuses the live registers still gives its power, counters and grid state', async () => {
    const poll = await device('eastron-sdm630', 'grid-meter').poll(bank(), at(0));
    expect(poll.readings[0]!.values).toMatchObject({ power_W: 999, state: 'ok' });
    expect(poll.readings[0]!.values.frequency_Hz).toBeUndefined();
  });

  it('the serial number of a V2 meter (holding 0xFC00, u32)', async () => {
    const dev = device('eastron-sdm630', 'grid-meter');
    await dev.poll(bank().set('holding', 0xfc00, '00 12 D6 87'), at(0));
    expect(dev.identity).toEqual({ manufacturer: 'Eastron', model: 'SDM630', serial: '1234567' });
  });

  it('reads with function code 4 in three requests: voltages, power, and the counters 18 registers further on', async () => {
    const b = bank();
    await device('eastron-sdm630', 'grid-meter').poll(b, at(0));
    // the first request asks for the identity (refused by this meter), then the data; after them
    // the optional live registers, which this bank refuses (asked one by one, then left out)
    expect(b.requests.slice(1, 4)).toEqual([
      { fn: 'input', unit: 1, address: 0x0000, count: 6 },
      { fn: 'input', unit: 1, address: 0x0034, count: 2 },
      { fn: 'input', unit: 1, address: 0x0048, count: 4 },
    ]);
  });

  it('exporting: a negative total power stays negative (import positive at the connection point)', async () => {
    const poll = await device('eastron-sdm630', 'grid-meter').poll(bank().set('input', 0x0034, 'C4 7A 00 00'), at(0));
    expect(poll.readings[0]!.values.power_W).toBe(-1000);
  });

  it('no voltage on any phase: the grid is not present', async () => {
    const b = bank()
      .set('input', 0x0000, '00 00 00 00')
      .set('input', 0x0002, '00 00 00 00')
      .set('input', 0x0004, '00 00 00 00');
    const poll = await device('eastron-sdm630', 'grid-meter').poll(b, at(0));
    expect(poll.readings[0]!.values.state).toBe('not_present');
  });

  it('single-phase wiring (L2, L3 at 0 V) is still ok', async () => {
    const b = bank().set('input', 0x0002, '00 00 00 00').set('input', 0x0004, '00 00 00 00');
    expect((await device('eastron-sdm630', 'grid-meter').poll(b, at(0))).readings[0]!.values.state).toBe('ok');
  });

  it('a NaN float is absent, not zero', async () => {
    const poll = await device('eastron-sdm630', 'consumption-meter').poll(
      bank().set('input', 0x0034, '7F C0 00 00'),
      at(0),
    );
    expect(withoutScales(poll.readings[0])).toEqual({
      streamId: 'dev',
      ts: 0,
      values: { voltage_L1_V: 230, voltage_L2_V: 230, voltage_L3_V: 230 },
      counters: { inWh: 10_000_000, outWh: 1_000_000 },
    });
  });

  it('a short answer is a decode error naming the profile', async () => {
    const b = bank();
    b.truncate = true;
    const err = await device('eastron-sdm630', 'grid-meter')
      .poll(b, at(0))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModbusError);
    expect((err as ModbusError).kind).toBe('decode');
    expect((err as ModbusError).message).toMatch(
      /profile eastron-sdm630.*asked unit 1 for 6 input registers at 0, the answer had 5 words/,
    );
  });
});

describe('Eastron SDM120 (single phase)', () => {
  it('active power at 0x000C, counters at 0x0048/0x004A, state from the one voltage', async () => {
    const b = new BankReader();
    zeros(b, 'input', 0x0000, 0x000e); // current, apparent power ... answer too
    b.set('input', 0x0000, '43 66 00 00') // 230.0 V
      .set('input', 0x000c, '43 FA 00 00') // active power 500.0 W
      .set('input', 0x0048, '42 C8 00 00') // import 100.0 kWh
      .set('input', 0x004a, '41 20 00 00'); // export 10.0 kWh
    const poll = await device('eastron-sdm120', 'grid-meter').poll(b, at(0));
    expect(withoutScales(poll.readings)).toEqual([
      {
        streamId: 'dev__GRID_METER_DERIVED',
        ts: 0,
        values: { power_W: 500, state: 'ok' },
        counters: { inWh: 100_000, outWh: 10_000 },
      },
    ]);
    // voltage and power are one request across the unused 0x0002..0x000B
    expect(b.requests[0]).toEqual({ fn: 'input', unit: 1, address: 0, count: 14 });
  });
});

describe('Huawei SUN2000 inverter, LUNA2000 battery and power meter behind one unit', () => {
  function bank(): BankReader {
    const b = new BankReader()
      .setText('holding', 30000, 'SUN2000-5KTL-L1', 15)
      .setText('holding', 30015, 'HV2012345678', 10);
    zeros(b, 'holding', 32064, 32082);
    b.set('holding', 32064, '00 00 15 E0') // input power 5600 → 5.600 kW (gain 1000)
      .set('holding', 32069, '09 08') // phase A voltage 2312 → 231.2 V (gain 10); B and C read 0
      .set('holding', 32072, '00 00 19 6E') // phase A current 6510 → 6.51 A (gain 1000)
      .set('holding', 32080, '00 00 13 88') // active power 5000 → 5.000 kW
      .set('holding', 32106, '00 01 E2 40') // accumulated yield 123456 → 1234.56 kWh (gain 100)
      .set('holding', 32085, '13 8A') // grid frequency 5002 → 50.02 Hz (gain 100)
      .set('holding', 32087, 'FF CE'); // internal temperature -50 → -5.0 °C (gain 10, I16)
    zeros(b, 'holding', 37001, 37005);
    b.set('holding', 37001, 'FF FF F8 30') // -2000 W: discharging
      .set('holding', 37004, '02 03') // 515 → 51.5 %
      .set('holding', 37066, '00 00 27 10') // total charge 10000 → 100.00 kWh
      .set('holding', 37068, '00 00 1F 40'); // total discharge 8000 → 80.00 kWh
    zeros(b, 'holding', 37100, 37123);
    b.set('holding', 37100, '00 01') // meter status normal
      .set('holding', 37101, '00 00 08 FC') // 2300 → 230.0 V
      .set('holding', 37107, 'FF FF FE 70') // phase A current -400 → 4.00 A as a magnitude (gain 100)
      .set('holding', 37113, 'FF FF FC 18') // -1000 W: supply from the grid
      .set('holding', 37118, '13 86') // grid frequency 4998 → 49.98 Hz (gain 100)
      .set('holding', 37119, 'FF FF FF 9C') // fed in: -100 (spurious sign) → 1.00 kWh
      .set('holding', 37121, '00 00 03 E8'); // taken from the grid: 1000 → 10.00 kWh
    return b;
  }

  it('inverter: AC power negative while delivering, PV negative while producing, yield in Wh, identity from 30000/30015', async () => {
    const dev = device('huawei-sun2000', 'inverter');
    const poll = await dev.poll(bank(), at(5));
    expect(withoutScales(poll.readings)).toEqual([
      {
        streamId: 'dev',
        ts: 5,
        values: {
          power_AC_W: -5000,
          frequency_Hz: 50.02,
          temperature_C: -5,
          voltage_L1_V: 231.2,
          voltage_L2_V: 0,
          voltage_L3_V: 0,
          current_L1_A: 6.51,
          current_L2_A: 0,
          current_L3_A: 0,
        },
        counters: { outWh: 1_234_560 },
      },
      { streamId: 'dev__dcm', ts: 5, values: { power_W: -5600 } },
    ]);
    expect(dev.identity).toEqual({ manufacturer: 'Huawei', model: 'SUN2000-5KTL-L1', serial: 'HV2012345678' });
  });

  it('battery: discharging is negative, SoC with gain 10, rated capacity absent when the firmware refuses 37758', async () => {
    const b = bank();
    const poll = await device('huawei-sun2000', 'battery').poll(b, at(0));
    expect(withoutScales(poll.readings)).toEqual([
      { streamId: 'dev', ts: 0, values: { power_W: -2000, soc: 51.5 }, counters: { inWh: 100_000, outWh: 80_000 } },
    ]);
    expect(poll.capacityWh).toBeUndefined();
    // the optional register was asked for in a request of its own
    expect(b.requests).toContainEqual({ fn: 'holding', unit: 1, address: 37758, count: 2 });
  });

  it('battery: the combined storage registers of two LUNA2000 stacks win over unit 1; refused, they are not asked again within the hour', async () => {
    const combined = bank();
    zeros(combined, 'holding', 37758, 37784);
    combined
      .set('holding', 37760, '02 26') // 550 → 55.0 % over both stacks
      .set('holding', 37765, '00 00 0A F0') // 2800 W charging
      .set('holding', 37780, '00 02 BF 20') // 180000 → 1800.00 kWh
      .set('holding', 37782, '00 02 84 88'); // 165000 → 1650.00 kWh
    const both = await device('huawei-sun2000', 'battery').poll(combined, at(0));
    expect(both.readings[0]).toMatchObject({
      values: { power_W: 2800, soc: 55 },
      counters: { inWh: 1_800_000, outWh: 1_650_000 },
    });

    // older firmware refuses 37758 and up: unit 1's registers, and the refused ones rest for an hour
    const older = bank();
    const dev = device('huawei-sun2000', 'battery');
    expect((await dev.poll(older, at(0))).readings[0]).toMatchObject({ values: { power_W: -2000, soc: 51.5 } });
    const n = older.requests.length;
    await dev.poll(older, at(10_000));
    expect(older.requests.slice(n).filter((r) => r.address >= 37758)).toEqual([]);
    const m = older.requests.length;
    await dev.poll(older, at(3_600_001));
    expect(older.requests.slice(m).some((r) => r.address === 37765)).toBe(true);
  });

  it('battery: rated capacity when the firmware has it', async () => {
    const poll = await device('huawei-sun2000', 'battery').poll(bank().set('holding', 37758, '00 00 3A 98'), at(0));
    expect(poll.capacityWh).toBe(15000);
  });

  it('rated capacity (pollIntervalSeconds 3600) is read on the first poll, then not again for an hour, its last value kept', async () => {
    const b = bank().set('holding', 37758, '00 00 3A 98'); // 15000 Wh
    const dev = device('huawei-sun2000', 'battery');
    const asked = (from: number) => b.requests.slice(from).some((r) => r.address === 37758);
    expect((await dev.poll(b, at(0))).capacityWh).toBe(15000);
    expect(asked(0)).toBe(true);
    b.set('holding', 37758, '00 00 27 10'); // 10000 Wh from now on
    let n = b.requests.length;
    const second = await dev.poll(b, at(10_000));
    expect(asked(n)).toBe(false);
    expect(second.capacityWh).toBe(15000);
    // other registers are read every poll
    expect(b.requests.slice(n).some((r) => r.address === 37001)).toBe(true);
    n = b.requests.length;
    const later = await dev.poll(b, at(3_600_000));
    expect(asked(n)).toBe(true);
    expect(later.capacityWh).toBe(10000);
  });

  it('grid meter: supply from the grid is import (positive), counters by direction, magnitude of a negative feed-in counter', async () => {
    const poll = await device('huawei-sun2000', 'grid-meter').poll(bank(), at(0));
    expect(withoutScales(poll.readings)).toEqual([
      {
        streamId: 'dev__GRID_METER_DERIVED',
        ts: 0,
        // live: 37101 230 V, the unset phases 0 V and 0 A, 37107 as a magnitude, 37118; 37132.. refused
        values: {
          power_W: 1000,
          state: 'ok',
          frequency_Hz: 49.98,
          voltage_L1_V: 230,
          voltage_L2_V: 0,
          voltage_L3_V: 0,
          current_L1_A: 4,
          current_L2_A: 0,
          current_L3_A: 0,
        },
        counters: { inWh: 10_000, outWh: 1000 },
      },
    ]);
  });

  it('grid meter: an offline meter (37100 = 0) makes the state unknown; no voltage makes it not_present', async () => {
    const offline = await device('huawei-sun2000', 'grid-meter').poll(bank().set('holding', 37100, '00 00'), at(0));
    expect(offline.readings[0]!.values.state).toBe('unknown');
    const dark = await device('huawei-sun2000', 'grid-meter').poll(bank().set('holding', 37101, '00 00 00 00'), at(0));
    expect(dark.readings[0]!.values.state).toBe('not_present');
  });

  it('the I32 not-available value 0x7FFFFFFF leaves PV power absent, not 2147483 kW', async () => {
    const poll = await device('huawei-sun2000', 'inverter').poll(bank().set('holding', 32064, '7F FF FF FF'), at(0));
    expect(withoutScales(poll.readings[1])).toEqual({ streamId: 'dev__dcm', ts: 0, values: {} });
  });

  it('a refused required register fails the poll with the Modbus exception', async () => {
    const err = await device('huawei-sun2000', 'battery')
      .poll(bank().delete('holding', 37066, 2), at(0))
      .catch((e: unknown) => e);
    expect((err as ModbusError).kind).toBe('exception');
  });
});

describe('Victron GX system service (unit 100, s16/u16, sums over phases)', () => {
  const bank = () =>
    new BankReader()
      .setText('holding', 800, 'c0619ab1d2e3', 6, 100)
      .set('holding', 817, '03 E8 00 C8 00 00', 100) // consumption 1000 + 200 + 0 W
      .set('holding', 820, 'FC 18 00 64 00 00', 100) // grid -1000 + 100 + 0 W
      .set('holding', 826, '00 01', 100) // active input: grid
      .set('holding', 842, 'FF 38 00 57', 100) // battery -200 W, SoC 87 %
      .set('holding', 850, '05 DC', 100) // DC PV 1500 W
      .set('holding', 866, '01 2C', 100); // VE.Bus DC 300 W into the battery

  it('grid: phases added (export 900 W is -900), state from the active input source', async () => {
    const b = bank();
    const poll = await device('victron-gx', 'grid-meter', 100).poll(b, at(0));
    expect(withoutScales(poll.readings)).toEqual([
      {
        streamId: 'dev__GRID_METER_DERIVED',
        ts: 0,
        // the summed registers are the live channels' phase powers too
        values: { power_W: -900, state: 'ok', power_L1_W: -1000, power_L2_W: 100, power_L3_W: 0 },
      },
    ]);
    // gaps are never bridged on a GX: 820-822 (read once for the sum and the phases) and 826 are separate requests
    expect(b.requests.filter((r) => r.address >= 820)).toEqual([
      { fn: 'holding', unit: 100, address: 820, count: 3 },
      { fn: 'holding', unit: 100, address: 826, count: 1 },
    ]);
  });

  it('grid state: 240 (not connected) and 2 (generator) are not_present, 0 unknown', async () => {
    for (const [raw, state] of [
      ['00 F0', 'not_present'],
      ['00 02', 'not_present'],
      ['00 00', 'unknown'],
    ] as const) {
      const poll = await device('victron-gx', 'grid-meter', 100).poll(bank().set('holding', 826, raw, 100), at(0));
      expect(poll.readings[0]!.values.state, raw).toBe(state);
    }
  });

  it('consumption, battery and inverter roles', async () => {
    expect((await device('victron-gx', 'consumption-meter', 100).poll(bank(), at(0))).readings[0]!.values).toEqual({
      power_W: 1200,
    });
    expect((await device('victron-gx', 'battery', 100).poll(bank(), at(0))).readings[0]!.values).toEqual({
      power_W: -200,
      soc: 87,
    });
    const inv = await device('victron-gx', 'inverter', 100).poll(bank(), at(0));
    expect(inv.readings.map((r) => r.values)).toEqual([{ power_DC_W: -300 }, { power_W: -1500 }]);
  });
});

describe('Sungrow SH-RT (input registers numbered from 1, low word first, battery direction from status bits)', () => {
  /** every address in 13000..13050 answers on the inverter; the bank holds zeros there unless set */
  function full(): BankReader {
    const b = new BankReader();
    zeros(b, 'input', 12999, 13050);
    return b
      .set('input', 4999, '0E 03') // reg 5000 device type code: SH10RT
      .setText('input', 4989, 'A2350415770', 10) // reg 4990 SN
      .set('input', 12999, '00 40') // reg 13000 system state: running
      .set('input', 13000, '00 04') // reg 13001 running state: discharging
      .set('input', 13007, '04 B0 00 00') // reg 13008-13009 load power 1200 W (low word first)
      .set('input', 13009, 'FC 18 FF FF') // reg 13010-13011 export power -1000 W: importing
      .set('input', 13019, '0F A0') // reg 13020 battery voltage 4000 → 400.0 V
      .set('input', 13020, '00 25') // reg 13021 battery current 37 → 3.7 A
      .set('input', 13021, '05 DC') // reg 13022 battery power 1500 W (magnitude)
      .set('input', 13022, '03 20') // reg 13023 battery level 800 → 80.0 %
      .set('input', 13023, '03 DE') // reg 13024 SOH 990 → 99.0 %
      .set('input', 13024, '00 EB') // reg 13025 battery temperature 235 → 23.5 °C
      .set('input', 13026, '27 10 00 00') // reg 13027 total discharge 10000 → 1000.0 kWh
      .set('input', 13036, 'C3 50 00 00') // reg 13037 total import 50000 → 5000.0 kWh
      .set('input', 13040, '4E 20 00 00') // reg 13041 total charge 20000 → 2000.0 kWh
      .set('input', 13045, '75 30 00 00'); // reg 13046 total export 30000 → 3000.0 kWh
  }

  it('battery: the unsigned power is negative while the running state says discharging', async () => {
    const dev = device('sungrow-sh-rt', 'battery');
    const poll = await dev.poll(full(), at(0));
    expect(withoutScales(poll.readings)).toEqual([
      {
        streamId: 'dev',
        ts: 0,
        values: { power_W: -1500, soc: 80, soh: 99, voltage_DC_V: 400, current_DC_A: 3.7, temperature_C: 23.5 },
        counters: { inWh: 2_000_000, outWh: 1_000_000 },
      },
    ]);
    expect(dev.identity).toEqual({ manufacturer: 'Sungrow', model: 'SH10RT', serial: 'A2350415770' });
  });

  it('battery: positive while charging (running state 0x0002)', async () => {
    const poll = await device('sungrow-sh-rt', 'battery').poll(full().set('input', 13000, '00 02'), at(0));
    expect(poll.readings[0]!.values.power_W).toBe(1500);
  });

  it('grid: export power -1000 (S32 low word first) is 1000 W of import; consumption positive', async () => {
    expect(withoutScales((await device('sungrow-sh-rt', 'grid-meter').poll(full(), at(0))).readings[0])).toEqual({
      streamId: 'dev__GRID_METER_DERIVED',
      ts: 0,
      values: { power_W: 1000, state: 'ok' },
      counters: { inWh: 5_000_000, outWh: 3_000_000 },
    });
    expect((await device('sungrow-sh-rt', 'consumption-meter').poll(full(), at(0))).readings[0]!.values).toEqual({
      power_W: 1200,
    });
  });

  it('grid: the off-grid system state (0x1000) is not_present', async () => {
    const poll = await device('sungrow-sh-rt', 'grid-meter').poll(full().set('input', 12999, '10 00'), at(0));
    expect(poll.readings[0]!.values.state).toBe('not_present');
  });

  it('asks for register 13022 at PDU address 13021 (the document counts from 1)', async () => {
    const b = full();
    await device('sungrow-sh-rt', 'battery').poll(b, at(0));
    const covers = (a: number) => b.requests.some((r) => r.address <= a && a < r.address + r.count);
    expect(covers(13021)).toBe(true);
    expect(b.requests.every((r) => r.fn === 'input')).toBe(true);
  });

  it('reset() forgets the slow values and reads identity again', async () => {
    const b = full();
    const dev = device('sungrow-sh-rt', 'battery');
    await dev.poll(b, at(0));
    dev.reset();
    const n = b.requests.length;
    await dev.poll(b, at(1000));
    const again = b.requests.slice(n);
    expect(again.some((r) => r.address === 4999)).toBe(true);
    expect(again.some((r) => r.address <= 13023 && 13023 < r.address + r.count)).toBe(true);
  });
});
