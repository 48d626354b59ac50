/**
 * `sitegw check-config` names every inverter whose active power limit does not keep the site
 * limited once the gateway is gone (docs/limits-vendors.md): one whose revert no source gives,
 * or one that reverts to unlimited; a device that keeps its limit (Victron's feed-in setting) and
 * a device without a limit map are not named.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkConfigCommand } from '../../src/cli/check-config.js';
import { captureLines as capture } from '../support/output.js';
import { MINIMAL, text, withLine } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'sitegw-check-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const device = (id: string, role: string, profile: string, host: string, unitId = 1) => [
  `  - id: ${id}`,
  `    role: ${role}`,
  `    profile: ${profile}`,
  `    connection: { type: tcp, host: ${host}, unitId: ${unitId} }`,
];

async function notes(devices: string[]): Promise<string[]> {
  const file = join(dir, `site-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, text([...MINIMAL.slice(0, 9), ...devices]));
  const io = capture();
  expect(await checkConfigCommand(file, io), io.stderr.join('\n')).toBe(0);
  return io.stdout.filter((l) => l.startsWith('note: '));
}

describe('check-config names inverters whose limit is not kept when the gateway is gone', () => {
  it('a Huawei inverter: both its limits, revert unknown', async () => {
    expect(await notes(device('inv', 'inverter', 'huawei-sun2000', '192.168.1.50'))).toEqual([
      'note: device inv (profile huawei-sun2000) output limit: no source says what it does with the limit once the gateway is gone (no source gives a communication timeout or fallback for 40125); see docs/limits-vendors.md',
      'note: device inv (profile huawei-sun2000) export limit: no source says what it does with the limit once the gateway is gone (no source gives a communication timeout or fallback for 47415/47416); see docs/limits-vendors.md',
    ]);
  });

  it('a SunSpec SolarEdge inverter through its StorEdge battery profile on the same unit', async () => {
    const got = await notes([
      ...device('inv', 'inverter', 'sunspec', '192.168.1.60'),
      ...device('bat', 'battery', 'solaredge-storedge', '192.168.1.60'),
    ]);
    expect(got).toEqual([
      'note: device inv (profile sunspec) export limit: no source says what it does with the limit once the gateway is gone (no source gives a communication timeout or fallback for 0xE000-0xE002); see docs/limits-vendors.md',
    ]);
  });

  it('an SMA inverter: the note says where its fallback is set', async () => {
    expect(await notes(device('sma', 'inverter', 'sma-modbus', '192.168.1.90', 3))).toEqual([
      "note: device sma (profile sma-modbus) output limit: no source says what it does with the limit once the gateway is gone (the inverter's own Fallback active power P after its Timeout, set in its web interface; no source gives their registers); see docs/limits-vendors.md",
    ]);
  });

  it('a StorEdge battery on another unit is not the inverter’s: no limit found', async () => {
    expect(
      await notes([
        ...device('inv', 'inverter', 'sunspec', '192.168.1.60'),
        ...device('bat', 'battery', 'solaredge-storedge', '192.168.1.60', 2),
      ]),
    ).toEqual([]);
  });

  it('a Victron GX keeps its feed-in limit; a profile without a limit map and a meter are not named', async () => {
    expect(
      await notes([
        ...device('gx', 'inverter', 'victron-gx', '192.168.1.70', 100),
        ...device('fox', 'inverter', 'foxess-h3', '192.168.1.80', 247),
        ...device('m', 'grid-meter', 'huawei-sun2000', '192.168.1.50'),
      ]),
    ).toEqual([]);
  });

  it('the summary stays as it was', async () => {
    const file = join(dir, 'plain.yaml');
    writeFileSync(file, text(withLine(12, '    profile: sunspec')));
    const io = capture();
    expect(await checkConfigCommand(file, io)).toBe(0);
    expect(io.stdout).toHaveLength(2);
  });
});
