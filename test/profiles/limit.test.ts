/**
 * A profile's `limit:` map run as the active-power-limit capability over real Modbus TCP against
 * a register image (test/support/control-device.ts): only the registers whose value changes are
 * written, each read back; watts become percent of the rating or raw W by the map's scale, never
 * above what was asked; the enable switch follows a setpoint the device kept, never one it
 * refused; the revert time and the fail-safe go where the map says.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createProfileLimit, LimitMapError, revertWarning } from '../../src/profiles/limit.js';
import { parseProfile } from '../../src/profiles/load.js';
import { type ClientBus, connectClientBus } from '../support/client-bus.js';
import { type ControlDevice, type ControlRegister, startControlDevice } from '../support/control-device.js';

const PROFILE = `name: test-pv
manufacturer: Acme
models: [P1]
source: { title: Acme Modbus map, version: '1.0', url: 'https://example.com/acme.pdf' }
# the document numbers registers from 1: its 200 is PDU address 199
defaults: { addressBase: 1 }
identify:
  manufacturer: Acme
  match:
    - { address: 1, type: u16, in: [1] }
roles:
  inverter:
    power_AC_W: { address: 10, type: s16, unit: W }
limit:
  source: { title: Acme limits, version: '1.0', url: 'https://example.com/acme-limits.pdf' }
  rating: { address: 500, type: u16, function: input, scale: 100 }
  output:
    timeout: { address: 202, type: u16, unit: s }
    setpoint: { address: 200, type: u16, unit: percent, scale: 10, max: 1000 }
    enable: { address: 201, type: u16, on: 0xAA, off: 0x55 }
    fallback: { address: 203, type: u16, unit: percent, scale: 10 }
    revert: { kind: revert-values, seconds: 60 }
  device-export-limit:
    setpoint: { address: 300, type: s16, unit: W, scale: 0.01, none: -1 }
    commit: { address: 310, type: u16, value: 1 }
    revert: { kind: unknown, seconds: 60 }
`;

// PDU addresses: the document's number less one
const REGISTERS: ControlRegister[] = [
  { address: 199, words: [1000], name: '200 setpoint' },
  { address: 200, words: [0x55], name: '201 enable' },
  { address: 201, words: [0], name: '202 timeout' },
  { address: 202, words: [1000], name: '203 fallback' },
  { address: 299, words: [0xffff], name: '300 export limit (-1 no limit)' },
  { address: 309, words: [0], name: '310 commit' },
];
// the rating: 8.0 kW as 80 × 100 W
const INPUTS: ControlRegister[] = [{ address: 499, words: [80], name: '500 rating' }];

function profileOf(text: string) {
  const r = parseProfile(text, 'test-pv', 'test-pv.yaml');
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.profile;
}

const open: { device: ControlDevice; bus: ClientBus }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.bus.close();
    await o.device.close();
  }
});

async function rig(opts: Parameters<typeof startControlDevice>[1] = {}, text = PROFILE, registers = REGISTERS) {
  const device = await startControlDevice({ unitId: 1, registers, inputs: INPUTS }, opts);
  const bus = await connectClientBus(device.host, device.port);
  open.push({ device, bus });
  const profile = profileOf(text);
  return {
    device,
    bus,
    output: createProfileLimit(profile, 1)!,
    exportLimit: createProfileLimit(profile, 1, 'device-export-limit')!,
  };
}

const sent = (d: ControlDevice, from = 0) => d.writes.slice(from).map((w) => [w.address, w.words]);

describe('an output limit in percent of the rating', () => {
  it('writes the revert time, the setpoint, then the enable, each read back; a repeat writes what restarts the timer', async () => {
    const { device, bus, output } = await rig();
    expect(await output.ratedW(bus)).toBe(8000);
    const first = await output.apply(bus, { kind: 'limit', watts: 2000 });
    // 2000 / 8000 = 25.0 % → 250; the timer 60 s; then 0xAA
    expect(first).toEqual([
      { address: 201, values: [60], readBack: [60] },
      { address: 199, values: [250], readBack: [250] },
      { address: 200, values: [0xaa], readBack: [0xaa] },
    ]);
    expect(sent(device)).toEqual([
      [201, [60]],
      [199, [250]],
      [200, [0xaa]],
    ]);
    // the same limit again: the timer register and the enable are as they were; the setpoint
    // write restarts the device's timer, so it goes out every time
    const n = device.writes.length;
    expect(await output.apply(bus, { kind: 'limit', watts: 2000 })).toEqual([
      { address: 199, values: [250], readBack: [250] },
    ]);
    expect(sent(device, n)).toEqual([[199, [250]]]);
  });

  it('rounds down (the device may hold less than asked, never more) and caps at 100 %', async () => {
    const { device, bus, output } = await rig();
    await output.apply(bus, { kind: 'limit', watts: 2007 }); // 25.0875 % → 250, not 251
    expect(device.words(199, 1)).toEqual([250]);
    await output.apply(bus, { kind: 'limit', watts: 0 });
    expect(device.words(199, 1)).toEqual([0]);
    await output.apply(bus, { kind: 'limit', watts: 20_000 });
    expect(device.words(199, 1)).toEqual([1000]);
  });

  it('no limit switches the enable off and leaves the setpoint', async () => {
    const { device, bus, output } = await rig();
    await output.apply(bus, { kind: 'limit', watts: 4000 });
    const n = device.writes.length;
    expect(await output.apply(bus, { kind: 'none' })).toEqual([{ address: 200, values: [0x55], readBack: [0x55] }]);
    expect(sent(device, n)).toEqual([[200, [0x55]]]);
    // and again: nothing changes, nothing is written
    expect(await output.apply(bus, { kind: 'none' })).toEqual([]);
    expect(device.words(199, 1)).toEqual([500]);
  });

  it('a setpoint the device does not keep stops the sequence before the enable', async () => {
    // the device keeps at most 20.0 %
    const { device, bus, output } = await rig({ clamp: { 199: 200 } });
    const records = await output.apply(bus, { kind: 'limit', watts: 4000 });
    expect(records.at(-1)).toEqual({ address: 199, values: [500], readBack: [200] });
    expect(device.words(200, 1)).toEqual([0x55]);
    expect(sent(device).map(([a]) => a)).not.toContain(200);
  });

  it('writes the fail-safe into the fallback register, in percent of the rating', async () => {
    const { device, bus, output } = await rig();
    expect(output.revert).toEqual({ kind: 'revert-values', seconds: 60 });
    expect(revertWarning(profileOf(PROFILE).limit!.maps.output!)).toBeUndefined();
    expect(await output.setFailSafe!(bus, 1200)).toEqual([{ address: 202, values: [150], readBack: [150] }]);
    expect(await output.setFailSafe!(bus, 1200)).toEqual([]);
    expect(device.writes).toHaveLength(1);
  });

  it('refuses a limit that is not a number of watts, before writing anything', async () => {
    const { device, bus, output } = await rig();
    for (const watts of [-1, Number.NaN, Number.POSITIVE_INFINITY])
      await expect(output.apply(bus, { kind: 'limit', watts })).rejects.toMatchObject({ code: 'LIMIT_WATTS_INVALID' });
    await expect(output.setFailSafe!(bus, -5)).rejects.toBeInstanceOf(LimitMapError);
    expect(device.writes).toEqual([]);
  });

  it('a rating register reading 0 is not a rating: nothing is written', async () => {
    const device = await startControlDevice({
      unitId: 1,
      registers: REGISTERS,
      inputs: [{ address: 499, words: [0], name: '500 rating' }],
    });
    const bus = await connectClientBus(device.host, device.port);
    open.push({ device, bus });
    const output = createProfileLimit(profileOf(PROFILE), 1)!;
    await expect(output.apply(bus, { kind: 'limit', watts: 1000 })).rejects.toMatchObject({
      code: 'LIMIT_RATING_INVALID',
    });
    expect(device.writes).toEqual([]);
  });
});

describe('a device export limit in W with a "no limit" value and a commit register', () => {
  it('writes the raw value (100 W units, rounded down) then commits; unchanged, nothing', async () => {
    const { device, bus, exportLimit } = await rig();
    expect(exportLimit.mode).toBe('device-export-limit');
    expect(await exportLimit.apply(bus, { kind: 'limit', watts: 1550 })).toEqual([
      { address: 299, values: [15], readBack: [15] },
      { address: 309, values: [1], readBack: [1] },
    ]);
    expect(await exportLimit.apply(bus, { kind: 'limit', watts: 1550 })).toEqual([]);
    expect(device.writes).toHaveLength(2);
  });

  it('no limit writes the document’s value for it (-1), then commits', async () => {
    const { device, bus, exportLimit } = await rig();
    await exportLimit.apply(bus, { kind: 'limit', watts: 0 });
    const n = device.writes.length;
    expect(await exportLimit.apply(bus, { kind: 'none' })).toEqual([
      { address: 299, values: [0xffff], readBack: [0xffff] },
      { address: 309, values: [1], readBack: [1] },
    ]);
    expect(sent(device, n)).toEqual([
      [299, [0xffff]],
      [309, [1]],
    ]);
  });

  it('an unknown revert is re-asserted like a keep-alive and named as unknown', async () => {
    const { exportLimit } = await rig();
    expect(exportLimit.revert).toEqual({ kind: 'keep-alive', seconds: 60 });
    expect(exportLimit.revertKnown).toBe(false);
    expect(exportLimit.setFailSafe).toBeUndefined();
    expect(revertWarning(profileOf(PROFILE).limit!.maps['device-export-limit']!)).toContain('no source says');
  });

  it('repairs a value someone else changed (the installer’s app)', async () => {
    const { device, bus, exportLimit } = await rig();
    await exportLimit.apply(bus, { kind: 'limit', watts: 3000 });
    device.set(299, [50]);
    await exportLimit.apply(bus, { kind: 'limit', watts: 3000 });
    expect(device.words(299, 1)).toEqual([30]);
  });
});

describe('a W setpoint without a "no limit" value', () => {
  const text = PROFILE.replace(
    '    setpoint: { address: 300, type: s16, unit: W, scale: 0.01, none: -1 }',
    '    setpoint: { address: 300, type: s16, unit: W, scale: 0.01 }',
  );

  it('no limit is the rating', async () => {
    const { device, bus, exportLimit } = await rig({}, text);
    await exportLimit.apply(bus, { kind: 'none' });
    expect(device.words(299, 1)).toEqual([80]);
  });

  it('without a rating register, no limit is refused by name and nothing is written', async () => {
    const noRating = text
      .replace('  rating: { address: 500, type: u16, function: input, scale: 100 }\n', '')
      .replace(/ {2}output:[\s\S]*? {2}device-export-limit:/, '  device-export-limit:');
    const { device, bus, exportLimit } = await rig({}, noRating);
    await expect(exportLimit.apply(bus, { kind: 'none' })).rejects.toMatchObject({ code: 'LIMIT_RATING_UNKNOWN' });
    await expect(exportLimit.ratedW(bus)).rejects.toMatchObject({ code: 'LIMIT_RATING_UNKNOWN' });
    expect(device.writes).toEqual([]);
  });
});

describe('revert kinds as check-config words them', () => {
  const withRevert = (revert: string) =>
    profileOf(
      PROFILE.replace('    fallback: { address: 203, type: u16, unit: percent, scale: 10 }\n', '').replace(
        '    revert: { kind: revert-values, seconds: 60 }',
        `    revert: ${revert}`,
      ),
    ).limit!.maps.output!;

  it('unlimited and keep-alive are named, kept limits are not', () => {
    expect(revertWarning(withRevert('{ kind: revert-unlimited, seconds: 120 }'))).toBe(
      'it drops the limit 120 s after the gateway is gone (reverts to unlimited)',
    );
    expect(revertWarning(withRevert('{ kind: keep-alive, seconds: 30 }'))).toContain('within 30 s');
    expect(revertWarning(withRevert('{ kind: none }'))).toBeUndefined();
    expect(withRevert('{ kind: none }').revert).toEqual({ kind: 'none' });
  });
});
