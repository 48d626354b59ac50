/**
 * `sitegw scan` on a SunSpec inverter whose chain holds its battery (issue 44 item 9): a Fronius
 * GEN24 Plus (124, and 160 whose modules StCha / StDisCha carry the battery's flows: Fronius'
 * SunSpec map, evcc's fronius-gen24 template) is offered its battery as SunSpec storage on the
 * same unit; an inverter whose 160 holds PV strings only is not (its batteries are units of their
 * own, test/modbus/scan.test.ts has the demo's). Read from the fixtures' register images.
 */
import { describe, expect, it } from 'vitest';
import type { RegisterReader } from '../../src/core/register-reader.js';
import { scanBus } from '../../src/discovery/scan.js';
import { siteYamlSnippet } from '../../src/discovery/scan-report.js';
import { ModbusError } from '../../src/modbus/errors.js';
import { installedProfiles } from '../../src/profiles/registry.js';
import type { RegisterBank } from '../../src/sim/bank.js';
import { type DeviceFixture, FIXTURE_DIR, imageRegisters, loadFixture } from '../support/register-image.js';

const profiles = [...installedProfiles().profiles.values()];

/** A fixture's register image as a reader: its unit answers what the image lists, exception 2 elsewhere. */
function imageReader(f: DeviceFixture): RegisterReader {
  const regs = imageRegisters(f);
  const read = (banks: readonly RegisterBank[]) => async (unit: number, address: number, n: number) => {
    if (unit !== f.image.unitId) throw new ModbusError('timeout', `unit ${unit}: no answer`);
    const bank = banks.find((b) => b.contains(address, n));
    if (!bank) throw new ModbusError('exception', `illegal data address ${address}`, 2);
    return bank.read(address, n);
  };
  return { readHolding: read(regs.holding), readInput: read(regs.input) };
}

describe('a SunSpec inverter whose battery is in its own chain', () => {
  const scan = async (fixture: string) => {
    const f = loadFixture(`${FIXTURE_DIR}${fixture}.yaml`);
    const result = await scanBus(imageReader(f), { units: [f.image.unitId], profiles });
    return siteYamlSnippet(result, { type: 'tcp', host: '192.0.2.10', port: 502 });
  };
  it('a Fronius GEN24 Plus (124, and 160 with StCha / StDisCha modules) is offered its battery as SunSpec storage', async () => {
    const yaml = await scan('fronius-gen24-plus');
    expect(yaml).toMatch(/- id: battery-1\n\s+role: battery\n\s+profile: sunspec\n/);
  });
  it('an inverter whose 160 holds PV strings only is not (its batteries are units of their own)', async () => {
    for (const fixture of ['kostal-plenticore-plus', 'solaredge-se10k'])
      expect(await scan(fixture), fixture).not.toMatch(/role: battery/);
  });
});
