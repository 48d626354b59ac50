/**
 * A profile's status table and PV strings (docs/device-profiles.md "Status" and "PV strings"):
 * mistakes in the table are refused at load with their line and a hint; on the wire, a code the
 * table lacks reads `unknown (code N)`, a status register that is missing or reads its
 * not-available value gives no status, and a string whose registers read the family's "no string"
 * pattern (0xFFFF, 0xFFFFFFFF, a float NaN) is no string. Register values are written out from
 * the sources the shipped profiles cite (goodwe et.py / const.py, SunGather, huawei-solar-lib).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { DeviceConfig, DeviceRole } from '../../src/config/types.js';
import type { DeviceProfile } from '../../src/profiles/compiled.js';
import { ProfileDevice } from '../../src/profiles/engine.js';
import { parseProfile } from '../../src/profiles/load.js';
import { loadProfiles, type ProfileRegistry } from '../../src/profiles/registry.js';
import type { ConfigError } from '../../src/yaml/errors.js';
import { BankReader } from './bank.js';

let registry: ProfileRegistry;
beforeAll(() => {
  registry = loadProfiles();
});

function device(profile: string | DeviceProfile, role: DeviceRole): ProfileDevice {
  const p = typeof profile === 'string' ? registry.get(profile)! : profile;
  const config: DeviceConfig = {
    id: 'inv',
    role,
    profile: p.name,
    connection: { type: 'tcp', host: '127.0.0.1', port: 502, unitId: 1, timeoutMs: 1000 },
  };
  return new ProfileDevice(config, p);
}

const at = (t: number) => () => t;
const hex16 = (v: number) => `${(v >> 8).toString(16).padStart(2, '0')} ${(v & 0xff).toString(16).padStart(2, '0')}`;

const INVERTER = `name: test-inverter
manufacturer: Acme
models: [I1]
source:
  title: Acme Modbus map
  version: '1.0'
  url: https://example.com/acme.pdf
identify:
  manufacturer: Acme
  match:
    - { address: 0, type: u16, in: [1] }
roles:
  inverter:
    power_AC_W: { address: 10, type: s16, unit: W, sign: -1 }
    status:
      address: 20
      type: u16
      states:
        running: [2]
        fault: [3]
`;

function errors(text: string): ConfigError[] {
  const r = parseProfile(text, 'test-inverter', 'test-inverter.yaml');
  if (r.ok) throw new Error('expected the profile to be refused');
  return r.errors;
}

/** INVERTER with its lines from `from` (1-based) replaced by `lines` */
function edited(from: number, ...lines: string[]): string {
  const all = INVERTER.split('\n');
  all.splice(from - 1, lines.length, ...lines);
  return all.join('\n');
}

describe('a malformed status table is a config error with its line and a hint', () => {
  it('the table as written is accepted, turned round to code → state', () => {
    const r = parseProfile(INVERTER, 'test-inverter', 'x');
    expect(r.ok).toBe(true);
    if (r.ok)
      expect([...r.profile.roles.inverter!.status!.states]).toEqual([
        [2, 'running'],
        [3, 'fault'],
      ]);
  });

  it('a state outside the closed set gets the nearest one', () => {
    const [e] = errors(edited(19, '        runing: [2]'));
    expect(e).toMatchObject({ path: 'roles.inverter.status.states.runing', line: 19 });
    expect(`${e!.message} ${e!.hint}`).toMatch(/'running'/);
  });

  it.each([
    {
      what: 'one code under two states',
      lines: [20, '        fault: [3, 2]'],
      path: 'fault[1]',
      message: 'code 2 (0x2) is listed for running already',
      hint: 'give each code one state',
    },
    {
      what: 'a code the register cannot hold',
      lines: [20, '        fault: [70000]'],
      path: 'fault[0]',
      message: '70000 (0x11170) does not fit in a u16 register',
      hint: 'a u16 holds 0 to 65535',
    },
    {
      what: "a code that is the register's not-available value",
      lines: [17, '      type: u16', '      sentinels: [0xFFFF]', '      states:', '        running: [0xFFFF]'],
      path: 'running[0]',
      message: "0xFFFF is the register's not-available value (sentinels)",
      hint: 'leave it out: it reads as no status, not as a state',
    },
  ] as const)('$what', ({ lines: [from, ...text], path, message, hint }) => {
    const [e] = errors(edited(from, ...text));
    expect(e).toMatchObject({ path: `roles.inverter.status.states.${path}`, line: 20, message, hint });
  });

  it('a state with no codes, a code that is text or negative', () => {
    expect(errors(edited(19, '        running: []'))[0]).toMatchObject({
      path: 'roles.inverter.status.states.running',
      line: 19,
    });
    expect(errors(edited(19, '        running: [two]'))[0]).toMatchObject({
      path: 'roles.inverter.status.states.running[0]',
      line: 19,
    });
    expect(errors(edited(19, '        running: [-1]'))[0]).toMatchObject({
      path: 'roles.inverter.status.states.running[0]',
      line: 19,
      message: 'must be at least 0, got -1',
    });
  });

  it('a status without states, and a float status register', () => {
    const [missing] = errors(edited(17, '      type: u16', '', '', ''));
    expect(missing).toMatchObject({
      path: 'roles.inverter.status.states',
      message: "required key 'states' is missing",
    });
    expect(missing!.hint).toMatch(/states/);
    const [float] = errors(edited(17, '      type: f32'));
    expect(float).toMatchObject({ path: 'roles.inverter.status.type', line: 17 });
    expect(float!.message).toMatch(/holds a code, not a float/);
  });

  it('a string without its current, and stringCount without strings', () => {
    const noCurrent = `${INVERTER}    pv:\n      strings:\n        - voltage_DC_V: { address: 30, type: u16, unit: V }\n`;
    expect(errors(noCurrent)[0]).toMatchObject({
      path: 'roles.inverter.pv.strings[0].current_DC_A',
      line: 23,
      message: "required key 'current_DC_A' is missing",
    });
    const countOnly = `${INVERTER}    pv:\n      stringCount: { address: 40, type: u16 }\n`;
    expect(errors(countOnly)[0]).toMatchObject({ path: 'roles.inverter.pv.stringCount', line: 22 });
  });
});

/** GoodWe ET registers 35000..35229 and 37000..37023 (the blocks goodwe et.py reads), zero but for `set` */
function goodwe(set: Record<number, string>): BankReader {
  const b = new BankReader();
  for (let a = 35000; a < 35230; a++) b.set('holding', a, '00 00');
  for (let a = 37000; a < 37024; a++) b.set('holding', a, '00 00');
  b.setText('holding', 35011, 'GW10K-ET', 5).setText('holding', 35003, '9010KETU205W0123', 8);
  for (const [a, h] of Object.entries(set)) b.set('holding', Number(a), h);
  return b;
}

/** GoodWe's two-tracker image: PV1 412.0 V 5.8 A 2,400 W, PV2 398.0 V 4.9 A 1,950 W, PV3/PV4 not there */
const TWO_TRACKERS = {
  35103: hex16(4120),
  35104: hex16(58),
  35105: '00 00 09 60',
  35107: hex16(3980),
  35108: hex16(49),
  35109: '00 00 07 9E',
  35111: 'FF FF FF FF',
  35113: 'FF FF FF FF',
  35115: 'FF FF FF FF',
  35117: 'FF FF FF FF',
};

describe('a status code on the wire', () => {
  it('is the state the table gives it (35187 work mode 1 "Normal (On-Grid)")', async () => {
    const poll = await device('goodwe-et', 'inverter').poll(goodwe({ 35187: '00 01' }), at(0));
    expect(poll.readings[0]!.values.status).toBe('running');
  });

  it('outside the table is unknown with its code, not a crash (4 "Flash Mode", 0x1234)', async () => {
    for (const [raw, code] of [
      ['00 04', 4],
      ['12 34', 0x1234],
    ] as const) {
      const poll = await device('goodwe-et', 'inverter').poll(goodwe({ 35187: raw }), at(0));
      expect(poll.readings[0]!.values.status).toBe(`unknown (code ${code})`);
      expect(poll.readings[0]!.values.power_AC_W).toBe(0);
    }
  });

  it("reads as no status when it is the register's not-available value (0xFFFF)", async () => {
    const dev = device('goodwe-et', 'inverter');
    expect((await dev.poll(goodwe({ 35187: '00 00' }), at(0))).readings[0]!.values.status).toBe('standby');
    const poll = await dev.poll(goodwe({ 35187: 'FF FF' }), at(1000));
    expect(poll.readings[0]!.values).not.toHaveProperty('status');
  });

  it('a firmware that refuses the status register keeps its power and counters', async () => {
    const bank = goodwe({ 35138: hex16(2850) }).delete('holding', 35187);
    const poll = await device('goodwe-et', 'inverter').poll(bank, at(0));
    // asked for on its own after the batch it was in was refused, and left out
    expect(bank.requests).toContainEqual({ fn: 'holding', unit: 1, address: 35187, count: 1 });
    expect(poll.readings[0]!.values).toMatchObject({ power_AC_W: -2850 });
    expect(poll.readings[0]!.values).not.toHaveProperty('status');
  });

  it('the battery has a table of its own (35184 battery mode 3 "Charge", 0 "No battery")', async () => {
    const charging = await device('goodwe-et', 'battery').poll(goodwe({ 35184: '00 03' }), at(0));
    expect(charging.readings[0]!.values.status).toBe('running');
    const none = await device('goodwe-et', 'battery').poll(goodwe({ 35184: '00 00' }), at(0));
    expect(none.readings[0]!.values.status).toBe('off');
  });
});

describe('PV strings', () => {
  it('are the inverter PV module streams, as many as the device answers for', async () => {
    const poll = await device('goodwe-et', 'inverter').poll(goodwe(TWO_TRACKERS), at(0));
    const strings = poll.readings.filter((r) => /__pv\d$/.test(r.streamId));
    expect(strings).toEqual([
      { streamId: 'inv__pv1', ts: 0, values: { power_W: -2400, voltage_DC_V: 412, current_DC_A: 5.8 } },
      { streamId: 'inv__pv2', ts: 0, values: { power_W: -1950, voltage_DC_V: 398, current_DC_A: 4.9 } },
    ]);
    expect(poll.pvModules).toBe(2);
  });

  it('a string glitching to 0xFFFF loses only its own values for that poll', async () => {
    const bank = goodwe({ ...TWO_TRACKERS, 35103: 'FF FF', 35104: 'FF FF' });
    const poll = await device('goodwe-et', 'inverter').poll(bank, at(0));
    expect(poll.readings.find((r) => r.streamId === 'inv__pv1')!.values).toEqual({ power_W: -2400 });
    expect(poll.readings.find((r) => r.streamId === 'inv__pv2')!.values).toMatchObject({ voltage_DC_V: 398 });
    expect(poll.pvModules).toBe(2);
  });

  it('an inverter whose every string reads "not there" (at night, or none wired) lists none', async () => {
    const all = Object.fromEntries(Object.keys(TWO_TRACKERS).map((a) => [a, 'FF FF FF FF']));
    const bank = goodwe(all);
    const poll = await device('goodwe-et', 'inverter').poll(bank, at(0));
    // the strings' registers were read, and said "not there"
    expect(bank.requests.some((r) => r.address <= 35103 && 35118 <= r.address + r.count)).toBe(true);
    expect(poll.readings.some((r) => /__pv\d$/.test(r.streamId))).toBe(false);
    expect(poll).not.toHaveProperty('pvModules');
  });

  it('without a power register the string power is V × I (Sungrow 5011/5012: 385.2 V × 6.8 A)', async () => {
    const b = new BankReader();
    for (let a = 4989; a < 5040; a++) b.set('input', a, '00 00');
    b.set('input', 4999, '0E 0F').set('input', 5010, hex16(3852)).set('input', 5011, hex16(68));
    b.set('input', 5012, hex16(3621)).set('input', 5013, 'FF FF'); // MPPT2 current not available
    for (let a = 12999; a < 13060; a++) b.set('input', a, '00 00');
    const poll = await device('sungrow-sh-rt', 'inverter').poll(b, at(0));
    expect(poll.readings.find((r) => r.streamId === 'inv__pv1')!.values).toEqual({
      power_W: -2619.36,
      voltage_DC_V: 385.2,
      current_DC_A: 6.8,
    });
    // no current, no power: a voltage alone says nothing of what the string makes
    expect(poll.readings.find((r) => r.streamId === 'inv__pv2')!.values).toEqual({ voltage_DC_V: 362.1 });
  });

  it('stringCount limits the strings to those the device says it has (Huawei 30071)', async () => {
    const b = new BankReader();
    b.setText('holding', 30000, 'SUN2000-10KTL-M1', 15).setText('holding', 30015, 'HV2310123456', 10);
    for (let a = 30025; a < 30090; a++) b.set('holding', a, '00 00');
    for (let a = 32016; a < 32120; a++) b.set('holding', a, '00 00');
    b.set('holding', 32016, hex16(4100)).set('holding', 32017, hex16(950)); // PV1 410 V 9.5 A
    b.set('holding', 32018, hex16(3980)).set('holding', 32019, hex16(856)); // PV2 398 V 8.56 A
    b.set('holding', 32020, hex16(3500)).set('holding', 32021, hex16(100)); // PV3: not wired, yet not zero
    const streams = async (count: string) => {
      b.set('holding', 30071, count);
      const poll = await device('huawei-sun2000', 'inverter').poll(b, at(0));
      return poll.readings.filter((r) => /__pv\d$/.test(r.streamId)).map((r) => r.streamId);
    };
    expect(await streams('00 02')).toEqual(['inv__pv1', 'inv__pv2']);
    // the count register glitching (0xFFFF, the u16 not-available value) limits nothing
    expect(await streams('FF FF')).toEqual(['inv__pv1', 'inv__pv2', 'inv__pv3', 'inv__pv4']);
  });

  it('a float string register reading NaN is no value', async () => {
    const text = `${INVERTER}    pv:\n      strings:\n        - voltage_DC_V: { address: 30, type: f32, unit: V }\n          current_DC_A: { address: 32, type: f32, unit: A }\n`;
    const r = parseProfile(text, 'test-inverter', 'x');
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const b = new BankReader().set('holding', 0, '00 01');
    for (let a = 10; a < 34; a++) b.set('holding', a, '00 00');
    b.set('holding', 30, '7F C0 00 00').set('holding', 32, '41 20 00 00'); // NaN V, 10.0 A
    const poll = await device(r.profile, 'inverter').poll(b, at(0));
    expect(poll.readings.find((x) => x.streamId === 'inv__pv1')!.values).toEqual({ current_DC_A: 10 });
  });
});
