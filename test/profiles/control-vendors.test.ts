/**
 * Each vendor's control map, run by the profile engine over real Modbus TCP against a fixture
 * device written from the vendor's register document (test/fixtures/control/): the device
 * receives exactly the writes the document prescribes, in order, each read back; a repeated
 * command writes only what restarts the device's timer (or the keep-alive); after the return to
 * self-consumption no more writes come.
 */
import { readdirSync } from 'node:fs';
import { basename } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StorageCommand } from '../../src/core/storage-control.js';
import { ControlMapError, createProfileControl } from '../../src/profiles/control.js';
import { loadProfiles } from '../../src/profiles/registry.js';
import { type ClientBus, connectClientBus } from '../support/client-bus.js';
import {
  CONTROL_FIXTURE_DIR,
  type ControlDevice,
  loadControlFixture,
  startControlDevice,
} from '../support/control-device.js';

const profiles = loadProfiles();
const fixtures = readdirSync(CONTROL_FIXTURE_DIR)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => basename(f, '.yaml'))
  .sort();

const open: { device?: ControlDevice; bus?: ClientBus }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.bus?.close();
    await o.device?.close();
  }
});

async function rig(name: string, opts?: Parameters<typeof startControlDevice>[1]) {
  const f = loadControlFixture(name);
  const device = await startControlDevice(f, opts);
  const bus = await connectClientBus(device.host, device.port);
  open.push({ device, bus });
  const profile = profiles.get(f.profile);
  if (!profile) throw new Error(`${name}: no profile ${f.profile}`);
  // the device's configured unit; a map may name its own (Victron's unit 100)
  const control = createProfileControl(profile, f.unitId);
  if (!control) throw new Error(`${name}: profile ${f.profile} has no control map`);
  return { f, device, bus, control };
}

describe('the vendor families the issue names each have a control map and a fixture device', () => {
  it('Sungrow SH, SolarEdge StorEdge, Huawei, GoodWe ET and Victron GX', () => {
    expect(fixtures).toEqual(['goodwe-et', 'huawei-sun2000', 'solaredge-storedge', 'sungrow-sh-rt', 'victron-gx']);
  });

  it('every shipped profile with a control map has its fixture device, and each cites its source', () => {
    const withControl = profiles.all().filter((p) => p.control);
    expect(withControl.map((p) => p.name).sort()).toEqual(fixtures.map((n) => loadControlFixture(n).profile).sort());
    for (const p of withControl)
      expect(p.control!.source.url).toMatch(/^https:\/\/github\.com\/.+\/blob\/[0-9a-f]{40}\//);
  });
});

describe('what a charge’s power is', () => {
  it('Victron’s override is a grid setpoint (the optimiser’s charge does not raise it to the PV surplus); the others a battery power', async () => {
    const power = Object.fromEntries(await Promise.all(fixtures.map(async (n) => [n, (await rig(n)).control.power])));
    expect(power).toEqual({
      'goodwe-et': 'battery',
      'huawei-sun2000': 'battery',
      'solaredge-storedge': 'battery',
      'sungrow-sh-rt': 'battery',
      'victron-gx': 'grid-setpoint',
    });
  });
});

describe.each(fixtures)('%s', (name) => {
  it('receives exactly the writes the document prescribes, in order, each read back', async () => {
    const { f, device, bus, control } = await rig(name);
    for (const step of f.steps) {
      const before = device.writes.length;
      const records = await control.apply(bus, step.command);
      const received = device.writes.slice(before).map((w) => ({ address: w.address, words: w.words }));
      expect(received, `${JSON.stringify(step.command)}: ${step.why}`).toEqual(step.writes);
      expect(device.writes.slice(before).every((w) => w.unitId === f.unitId)).toBe(true);
      expect(records).toEqual(step.writes.map((w) => ({ address: w.address, values: w.words, readBack: w.words })));
    }
    // the last steps return to self-consumption: later self-consumption commands write nothing
    const last = device.writes.length;
    for (let i = 0; i < 3; i++) expect(await control.apply(bus, { mode: 'self-consumption' })).toEqual([]);
    expect(device.writes.length).toBe(last);
  });

  it('refuses a mode the document does not give, and an invalid power, before writing anything', async () => {
    const { device, bus, control } = await rig(name);
    for (const mode of ['hold', 'charge', 'discharge'] as const) {
      if (control.modes.includes(mode)) continue;
      const cmd = (mode === 'hold' ? { mode } : { mode, powerW: 1000 }) as StorageCommand;
      await expect(control.apply(bus, cmd)).rejects.toMatchObject({ code: 'CONTROL_MODE_UNSUPPORTED' });
    }
    for (const powerW of [-1, Number.NaN, Number.POSITIVE_INFINITY])
      await expect(control.apply(bus, { mode: 'charge', powerW })).rejects.toBeInstanceOf(ControlMapError);
    expect(device.writes).toEqual([]);
  });

  it('writes again what someone else changed on the device (the keep-alive repairs drift)', async () => {
    const { f, device, bus, control } = await rig(name);
    const first = f.steps[0]!;
    await control.apply(bus, first.command);
    const target = first.writes[0]!;
    // an installer's app puts the first register back to its factory value
    const factory = f.registers.find((r) => r.address === target.address)!;
    device.set(target.address, factory.words);
    const before = device.writes.length;
    await control.apply(bus, first.command);
    expect(device.writes.slice(before).map((w) => w.address)).toContain(target.address);
    expect(device.words(target.address, target.words.length)).toEqual(target.words);
  });
});

describe('a device that does not keep a value', () => {
  it('stops the sequence at the write whose read-back differs, and returns it', async () => {
    // the Sungrow keeps at most 1500 W in its power register
    const { device, bus, control } = await rig('sungrow-sh-rt', { clamp: { 13051: 1500 } });
    const records = await control.apply(bus, { mode: 'charge', powerW: 2000 });
    expect(records).toEqual([
      { address: 13049, values: [2], readBack: [2] },
      { address: 13051, values: [2000], readBack: [1500] },
    ]);
    // the charge command itself was never sent
    expect(device.writes.map((w) => w.address)).toEqual([13049, 13051]);
    expect(device.words(13050, 1)).toEqual([0xcc]);
  });

  it('a write to a register the device lacks is an error, not a silent success', async () => {
    const f = loadControlFixture('solaredge-storedge');
    // firmware without the remote-control block: only the control mode register answers
    const device = await startControlDevice({ unitId: f.unitId, registers: f.registers.slice(0, 1) });
    const bus = await connectClientBus(device.host, device.port);
    open.push({ device, bus });
    const control = createProfileControl(profiles.get('solaredge-storedge')!, f.unitId)!;
    await expect(control.apply(bus, { mode: 'charge', powerW: 2000 })).rejects.toThrow(/0xE00A|exception|address/i);
  });
});

describe('a revert-timer map ends its command on the device when the gateway goes quiet', () => {
  // SolarEdge: when 0xE00B's seconds pass after the last 0xE00D write, the inverter returns to
  // the default mode 0xE00A. Huawei: when 47083's minutes pass after 47100 was written, the
  // forcible command stops (47100 reads 0).
  const cases = [
    {
      name: 'solaredge-storedge',
      revert: {
        restartOn: 0xe00d,
        timer: { address: 0xe00b, words: 2, wordOrder: 'little', unit: 's' },
        target: 0xe00d,
        revertTo: { from: 0xe00a },
      },
      command: 0xe00d,
      selfConsumption: 7,
    },
    {
      name: 'huawei-sun2000',
      revert: {
        restartOn: 47100,
        timer: { address: 47083, words: 1, wordOrder: 'big', unit: 'min' },
        target: 47100,
        revertTo: { value: 0 },
      },
      command: 47100,
      selfConsumption: 0,
    },
  ] as const;

  it.each(cases)('$name: back in self-consumption within life.seconds, and not before', async (c) => {
    let now = 1_000_000;
    const { bus, control, device } = await rig(c.name, { revert: c.revert, now: () => now });
    expect(control.life).toEqual({ kind: 'revert-timer', seconds: 60 });
    expect(control.fallsBack).toBe(true);
    await control.apply(bus, { mode: 'charge', powerW: 2000 });
    const charging = device.words(c.command, 1)[0];
    expect(charging).not.toBe(c.selfConsumption);
    // the executor re-asserts inside the life: the timer starts again
    now += 50_000;
    await control.apply(bus, { mode: 'charge', powerW: 2000 });
    now += 50_000;
    expect(await bus.readHolding(1, c.command, 1)).toEqual([charging]);
    // then the gateway dies: nothing is written any more
    now += 10_001;
    expect(await bus.readHolding(1, c.command, 1)).toEqual([c.selfConsumption]);
  });
});
