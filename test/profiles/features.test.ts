/**
 * Profile features the shipped profiles do not all use: SunSpec-style scale-factor registers,
 * 64-bit counters, byte order, sanity limits; plus scan identification on the shipped ones.
 */
import { describe, expect, it } from 'vitest';
import type { DeviceConfig } from '../../src/config/types.js';
import { ModbusError } from '../../src/modbus/errors.js';
import type { DeviceProfile } from '../../src/profiles/compiled.js';
import { ProfileDevice } from '../../src/profiles/engine.js';
import { matchesProfile, readIdentity } from '../../src/profiles/identify.js';
import { parseProfile } from '../../src/profiles/load.js';
import { installedProfiles, loadProfiles } from '../../src/profiles/registry.js';
import { withoutScales } from '../support/counter-scales.js';
import { BankReader } from './bank.js';

function profile(roles: string, extra = ''): DeviceProfile {
  const text = `name: acme
manufacturer: Acme
models: [X]
source: { title: Acme map, version: '1', url: 'https://example.com/x.pdf' }
identify:
  manufacturer: Acme
  match: [{ address: 0, type: u16, in: [1] }]
${extra}roles:
${roles}`;
  const r = parseProfile(text, 'acme', 'acme.yaml');
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.profile;
}

function battery(p: DeviceProfile): ProfileDevice {
  const config: DeviceConfig = {
    id: 'bat',
    role: 'battery',
    profile: 'acme',
    connection: { type: 'tcp', host: 'h', port: 502, unitId: 1, timeoutMs: 1000 },
  };
  return new ProfileDevice(config, p);
}

describe('scale-factor registers (SunSpec semantics: value × 10^sf)', () => {
  // SunSpec model 802 style: W at 40100 (int16) with its scale factor W_SF at 40101 (sunssf)
  const p = profile(`  battery:
    power_W: { address: 40100, type: s16, unit: W, sentinels: [0x8000], scaleFactor: { address: 40101, type: s16, sentinels: [0x8000] } }
`);
  const poll = (w: string, sf: string) =>
    battery(p).poll(new BankReader().set('holding', 40100, w).set('holding', 40101, sf), () => 0);

  it('1500 with sf -1 is 150.0 W; with sf 2 it is 150000 W', async () => {
    expect((await poll('05 DC', 'FF FF')).readings[0]!.values.power_W).toBe(150);
    expect((await poll('05 DC', '00 02')).readings[0]!.values.power_W).toBe(150_000);
  });

  it('-2000 (0xF830) with sf -3 is -2.0 W', async () => {
    expect((await poll('F8 30', 'FF FD')).readings[0]!.values.power_W).toBe(-2);
  });

  it('a not-implemented scale factor (0x8000) leaves the value absent', async () => {
    expect((await poll('05 DC', '80 00')).readings[0]!.values).toEqual({});
  });

  it('a not-implemented value (0x8000) is absent whatever the scale factor', async () => {
    expect((await poll('80 00', 'FF FF')).readings[0]!.values).toEqual({});
  });

  it('a scale factor outside -10..10 is a decode error naming profile and register', async () => {
    const err = await poll('05 DC', '00 14').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModbusError);
    expect((err as ModbusError).kind).toBe('decode');
    expect((err as ModbusError).message).toBe(
      'profile acme, holding register 40100 (0x9CA4): scale factor holding register 40101 (0x9CA5) reads 20, outside -10..10',
    );
  });
});

describe('counters, byte order, limits', () => {
  it('u64 Wh counters and a quoted 64-bit sentinel', async () => {
    const p = profile(`  battery:
    power_W: { address: 0, type: s16, unit: W }
    inWh: { address: 10, type: u64, unit: Wh, sentinels: ['0xFFFFFFFFFFFFFFFF'] }
    outWh: { address: 14, type: u64, unit: Wh, sentinels: ['0xFFFFFFFFFFFFFFFF'] }
`);
    // registers 0..9 answer (the default batching spans the gap)
    const b = new BankReader()
      .set('holding', 0, '00 00 '.repeat(10))
      .set('holding', 10, '00 00 00 1C BE 99 1A 14')
      .set('holding', 14, 'FF FF FF FF FF FF FF FF');
    const poll = await battery(p).poll(b, () => 0);
    expect(withoutScales(poll.readings[0]!.counters)).toEqual({ inWh: 123_456_789_012 });
  });

  it('byte-swapped registers ("BADC") declared in defaults', async () => {
    const p = profile(
      `  battery:
    power_W: { address: 0, type: f32, unit: W }
`,
      'defaults: { byteOrder: little }\n',
    );
    const poll = await battery(p).poll(new BankReader().set('holding', 0, '79 44 00 C0'), () => 0);
    expect(poll.readings[0]!.values.power_W).toBe(999);
  });

  it('a negative lifetime counter is left out rather than stored', async () => {
    const p = profile(`  battery:
    power_W: { address: 0, type: s16, unit: W }
    inWh: { address: 1, type: s32, unit: kWh }
`);
    const poll = await battery(p).poll(new BankReader().set('holding', 0, '00 64 FF FF FF FF'), () => 0);
    expect(withoutScales(poll.readings[0])).toEqual({ streamId: 'bat', ts: 0, values: { power_W: 100 } });
  });

  it('an SoC outside 0..100 % is a decode error that suggests the scale', async () => {
    const p = profile(`  battery:
    soc: { address: 0, type: u16, unit: '%' }
`);
    const err = await battery(p)
      .poll(new BankReader().set('holding', 0, '03 20'), () => 0)
      .catch((e: unknown) => e);
    expect((err as ModbusError).kind).toBe('decode');
    expect((err as ModbusError).message).toMatch(
      /soc 800 % is outside 0\.\.100; the scale in the profile is probably wrong/,
    );
  });

  it('an answer word outside 16 bits is a decode error', async () => {
    const p = profile(`  battery:
    power_W: { address: 0, type: s16, unit: W }
`);
    const reader = { readHolding: () => Promise.resolve([70000]), readInput: () => Promise.resolve([0]) };
    const err = await battery(p)
      .poll(reader, () => 0)
      .catch((e: unknown) => e);
    expect((err as ModbusError).kind).toBe('decode');
  });
});

describe('identification for a scan', () => {
  const registry = loadProfiles();
  const sdm630 = () =>
    new BankReader()
      .set('input', 0x0046, '42 48 00 00') // 50.0 Hz
      .set('holding', 0x000a, '40 40 00 00') // system type 3.0 (3p4w)
      .set('holding', 0x0014, '3F 80 00 00'); // Modbus address 1.0
  const huawei = () =>
    new BankReader().setText('holding', 30000, 'SUN2000-10KTL-M1', 15).setText('holding', 30015, 'ES2110012345', 10);

  it('an SDM630 matches the SDM630 profile, not the SDM120 one (it answers System Type) nor the Huawei one', async () => {
    expect(await matchesProfile(registry.get('eastron-sdm630')!, sdm630(), 1)).toBe(true);
    expect(await matchesProfile(registry.get('eastron-sdm120')!, sdm630(), 1)).toBe(false);
    expect(await matchesProfile(registry.get('huawei-sun2000')!, sdm630(), 1)).toBe(false);
  });

  it('a single-phase meter without the system type register is not an SDM630', async () => {
    const b = new BankReader().set('input', 0x0046, '42 48 00 00').set('holding', 0x0014, '3F 80 00 00');
    expect(await matchesProfile(registry.get('eastron-sdm630')!, b, 1)).toBe(false);
    expect(await matchesProfile(registry.get('eastron-sdm120')!, b, 1)).toBe(true);
  });

  it('a frequency out of range does not match', async () => {
    expect(await matchesProfile(registry.get('eastron-sdm630')!, sdm630().set('input', 0x0046, '00 00 00 00'), 1)).toBe(
      false,
    );
  });

  it('a Huawei inverter is recognised by its model string and tells model and serial', async () => {
    const p = registry.get('huawei-sun2000')!;
    expect(await matchesProfile(p, huawei(), 1)).toBe(true);
    expect(await readIdentity(p, huawei(), 1)).toEqual({
      manufacturer: 'Huawei',
      model: 'SUN2000-10KTL-M1',
      serial: 'ES2110012345',
    });
  });

  it('a timeout is not "no match": it is thrown, so the scan can report a silent unit', async () => {
    const silent = {
      readHolding: () => Promise.reject(new ModbusError('timeout', 'no answer')),
      readInput: () => Promise.reject(new ModbusError('timeout', 'no answer')),
    };
    await expect(matchesProfile(registry.get('eastron-sdm630')!, silent, 1)).rejects.toMatchObject({ kind: 'timeout' });
  });
});

describe('sungrow-sh-rt: the identity match and the model names list the same device type codes', () => {
  it('every code that is matched has a model name, and every named code is matched (SH-RT-V112, SH-RS, SH-T included)', () => {
    const p = installedProfiles().profiles.get('sungrow-sh-rt')!;
    const matched = [...p.identify.match[0]!.in!].sort((a, b) => a - b);
    const named = Object.keys(p.identify.registers.model!.map!)
      .map(Number)
      .sort((a, b) => a - b);
    expect(matched).toEqual(named);
    for (const code of [0x0e0c, 0x0e0f, 0x0e0b, 0x0e13, 0x0d17, 0x0d18, 0x0d1a, 0x0d1b, 0x0e20, 0x0e28])
      expect(matched).toContain(code);
  });
});
