/**
 * The registers the proxy protects while control is on are those of the storage's `control:`
 * map, on the unit the map answers on: for Sungrow SH-RT the EMS registers 13049–13051
 * (test/fixtures/control/sungrow-sh-rt.yaml, from Sungrow's document V1.0.20 and evcc's
 * sungrow-hybrid template), for GoodWe ET those of test/fixtures/control/goodwe-et.yaml.
 */
import { describe, expect, it } from 'vitest';
import type { DeviceConfig } from '../../src/config/types.js';
import type { RegisterReader } from '../../src/core/register-reader.js';
import { loadProfiles } from '../../src/profiles/index.js';
import { controlRegistersAt, firstProtected, overlaps } from '../../src/proxy/control-registers.js';
import { loadControlFixture } from '../support/control-device.js';

const profiles = loadProfiles();
const noBus: RegisterReader = {
  readHolding: () => Promise.reject(new Error('no bus')),
  readInput: () => Promise.reject(new Error('no bus')),
};
const device = (profile: string, unitId: number, port = 502): DeviceConfig =>
  ({
    id: `inv-${profile}`,
    role: 'inverter',
    profile,
    connection: { type: 'tcp', host: '192.168.1.50', port, unitId, timeoutMs: 1000 },
  }) as DeviceConfig;

describe('control registers the proxy protects', () => {
  it.each(['sungrow-sh-rt', 'goodwe-et'])('%s: every register its fixture device is written at', async (name) => {
    const f = loadControlFixture(name);
    const inv = device(f.profile, f.unitId);
    const ranges = await controlRegistersAt(inv, [{ config: inv }], profiles, noBus);
    const written = new Set(f.steps.flatMap((s) => s.writes.map((w) => w.address)));
    expect(written.size).toBeGreaterThan(0);
    for (const address of written) expect(overlaps(ranges!, address, 1), `register ${address}`).toBeDefined();
    // the registers a third party may still write: none of the map's
    expect(overlaps(ranges!, 13057, 1)).toBeUndefined();
  });

  it("another unit or another link of the storage's is not protected", async () => {
    const inv = device('sungrow-sh-rt', 1);
    expect(await controlRegistersAt(device('sungrow-sh-rt', 2), [{ config: inv }], profiles, noBus)).toEqual([]);
    expect(await controlRegistersAt(device('sungrow-sh-rt', 1, 1502), [{ config: inv }], profiles, noBus)).toEqual([]);
    expect(await controlRegistersAt(inv, [], profiles, noBus)).toEqual([]);
  });

  it('a SunSpec storage whose model 124 cannot be read protects the whole unit (null)', async () => {
    const inv = device('sunspec', 1);
    expect(await controlRegistersAt(inv, [{ config: inv }], profiles, noBus)).toBeNull();
  });
});

describe('what a refused write names (issue 44 item 10)', () => {
  // SunSpec model 124 as the proxy protects it: its header and body, 40348..40375 on the demo's map
  const model124 = [{ address: 40348, count: 28 }];
  it('the first register of the write that control holds, not the first of the model', () => {
    expect(firstProtected(model124, 40360, 2)).toBe(40360);
    expect(firstProtected(model124, 40340, 10)).toBe(40348);
    expect(firstProtected(model124, 40300, 10)).toBeUndefined();
    expect(firstProtected([{ address: 13051, count: 1 }, ...model124, { address: 13049, count: 1 }], 13049, 3)).toBe(
      13049,
    );
  });
});
