/**
 * site.yaml rules about device profiles: the name must be a file in device-profiles/, the file
 * must describe the device's role, and several devices may share one Modbus address only as the
 * roles of one device (same profile, different roles; or a vendor profile next to SunSpec).
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkConfigCommand } from '../../src/cli/check-config.js';
import { profileFindings } from '../../src/profiles/config-check.js';
import { readProfileDir } from '../../src/profiles/load.js';
import { parseConfig } from '../../src/profiles/site-config.js';
import { captureLines } from '../support/output.js';
import { errorsOf, expectSingleError, MINIMAL, text, withAppended } from './fixtures.js';

const parse = (lines: readonly string[]) => parseConfig(text(lines), 'site.yaml', '/etc/sitegw');

/** every shipped profile, in the order the hints list them */
const SHIPPED = readdirSync(fileURLToPath(new URL('../../device-profiles/', import.meta.url)))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''))
  .sort()
  .join(', ');

/** MINIMAL's devices replaced by these, one flow mapping per device */
function devices(...ds: string[]): string[] {
  return [...MINIMAL.slice(0, 9), ...ds.map((d) => `  - ${d}`)];
}
const huawei = (id: string, role: string, unitId = 1) =>
  `{ id: ${id}, role: ${role}, profile: huawei-sun2000, connection: { type: tcp, host: 192.168.1.60, unitId: ${unitId} } }`;

describe('profile names', () => {
  it('a name with no file in device-profiles/ is refused, with a suggestion and the list', () => {
    const e = expectSingleError(
      parse(withAppended([], [...MINIMAL.slice(0, 11), '    profile: eastron-sdm63', ...MINIMAL.slice(12)])),
      {
        path: 'devices[0].profile',
        line: 12,
        message: /^no device profile named 'eastron-sdm63' \(looked in .*device-profiles/,
        hint: /^did you mean 'eastron-sdm630'\? available: sunspec, /,
      },
    );
    expect(e.hint).toContain(`available: sunspec, ${SHIPPED}`);
    expect(SHIPPED).toContain('eastron-sdm120, eastron-sdm630, ');
  });

  it('a profile without a section for the role', () => {
    expectSingleError(
      parse(withAppended([], [...MINIMAL.slice(0, 11), '    profile: eastron-sdm630', ...MINIMAL.slice(12)])),
      {
        path: 'devices[0].profile',
        line: 12,
        message: /^the profile 'eastron-sdm630' has no inverter section$/,
        hint: /it describes: grid-meter, consumption-meter/,
      },
    );
  });

  it('a shipped profile for the role is accepted', () => {
    const r = parse(devices(huawei('inv', 'inverter')));
    expect(r.ok ? [] : r.errors).toEqual([]);
  });

  it('a broken profile file is reported at the device that uses it, with its file and line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'profiles-'));
    try {
      writeFileSync(join(dir, 'acme.yaml'), 'name: acme\nmanufacturer: Acme\n');
      const [f] = profileFindings([{ id: 'm', role: 'grid-meter', profile: 'acme' }], readProfileDir(dir));
      expect(f).toMatchObject({ segments: ['devices', 0, 'profile'] });
      expect(f!.message).toBe(
        `the profile 'acme' has 4 mistakes: ${join(dir, 'acme.yaml')}:1 models: required key 'models' is missing`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('devices sharing one Modbus address', () => {
  it('the inverter, battery and meter of one hybrid inverter share host, port and unit', () => {
    const r = parse(devices(huawei('inv', 'inverter'), huawei('bat', 'battery'), huawei('meter', 'grid-meter')));
    expect(r.ok ? [] : r.errors).toEqual([]);
  });

  it('two devices of the same role at one address are refused', () => {
    const errors = errorsOf(
      parse(devices(huawei('inv', 'inverter'), huawei('bat', 'battery'), huawei('bat2', 'battery'))),
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      path: 'devices[2].connection',
      line: 12,
      message: "same address as devices[1] ('bat'): 192.168.1.60:502 unit 1",
    });
    expect(errors[0]!.hint).toMatch(/same profile, different roles/);
  });

  it('different profiles at one address are refused', () => {
    const other = `{ id: meter, role: grid-meter, profile: eastron-sdm630, connection: { type: tcp, host: 192.168.1.60, unitId: 1 } }`;
    const errors = errorsOf(parse(devices(huawei('inv', 'inverter'), other)));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      path: 'devices[1].connection',
      message: "same address as devices[0] ('inv'): 192.168.1.60:502 unit 1",
    });
  });

  it("a vendor's own map next to the unit's SunSpec map shares it (a SolarEdge inverter and its StorEdge battery)", () => {
    const at = 'connection: { type: tcp, host: 192.168.1.70, port: 1502, unitId: 1 }';
    const r = parse(
      devices(
        `{ id: inv, role: inverter, profile: sunspec, ${at} }`,
        `{ id: bat, role: battery, profile: solaredge-storedge, ${at} }`,
      ),
    );
    expect(r.ok ? [] : r.errors).toEqual([]);
  });

  it('a sunspec device next to a profile not written for its unit is refused (a meter set to the same address)', () => {
    const at = 'connection: { type: tcp, host: 192.168.1.70, unitId: 1 }';
    const errors = errorsOf(
      parse(
        devices(
          `{ id: grid, role: grid-meter, profile: sunspec, ${at} }`,
          `{ id: house, role: consumption-meter, profile: shelly-pro-3em, ${at} }`,
        ),
      ),
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      path: 'devices[1].connection',
      message: "same address as devices[0] ('grid'): 192.168.1.70:502 unit 1",
    });
  });

  describe('which inverter a battery belongs to', () => {
    // a Sunny Tripower on SMA's SunSpec unit 126 listed first, a Sunny Boy Storage on its own
    // map at unit 3 of another host: the storage inverter owns the battery (issue 33)
    const stp =
      '{ id: stp, role: inverter, profile: sunspec, connection: { type: tcp, host: 192.168.1.80, unitId: 126 } }';
    const sbsAt = 'connection: { type: tcp, host: 192.168.1.81, unitId: 3 }';
    const sbs = `{ id: sbs, role: inverter, profile: sma-modbus, ${sbsAt} }`;
    const ownerOf = (battery: string) => {
      const r = parse(devices(stp, sbs, battery));
      if (!r.ok) throw new Error(JSON.stringify(r.errors));
      return r.config.devices.find((d) => d.id === 'bat')?.inverter;
    };

    it('the inverter read at the same address owns the battery, not the first inverter', () => {
      expect(ownerOf(`{ id: bat, role: battery, profile: sma-modbus, ${sbsAt} }`)).toBe('sbs');
    });

    it('`inverter:` in site.yaml overrides the guess', () => {
      expect(ownerOf(`{ id: bat, role: battery, profile: sma-modbus, inverter: stp, ${sbsAt} }`)).toBe('stp');
    });

    it("a battery on no inverter's address or wire goes to the first inverter", () => {
      const elsewhere = 'connection: { type: tcp, host: 192.168.1.82, unitId: 1 }';
      expect(ownerOf(`{ id: bat, role: battery, profile: huawei-sun2000, ${elsewhere} }`)).toBe('stp');
    });
  });

  it('another unit id on the same host is a different device', () => {
    const r = parse(devices(huawei('inv', 'inverter'), huawei('inv2', 'inverter', 2)));
    expect(r.ok ? [] : r.errors).toEqual([]);
  });
});

describe('check-config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-check-profiles-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 1 and names the unknown profile', async () => {
    const io = captureLines();
    const { stderr } = io;
    const file = join(dir, 'site.yaml');
    writeFileSync(
      file,
      text(
        devices(`{ id: meter, role: grid-meter, profile: acme-meter, connection: { type: tcp, host: 192.168.1.61 } }`),
      ),
    );
    expect(await checkConfigCommand(file, io)).toBe(1);
    expect(stderr[0]).toMatch(
      new RegExp(
        `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:10:36 devices\\[0\\]\\.profile: no device profile named 'acme-meter'`,
      ),
    );
    expect(stderr[0]!.endsWith(`— use one of: sunspec, ${SHIPPED}`)).toBe(true);
  });
});
