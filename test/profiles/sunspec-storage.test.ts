/**
 * SunSpec model 124 as the gateway writes it (src/profiles/sunspec-storage.ts), against the
 * simulated inverter's registers in process: a keep-alive that comes after the inverter's own
 * revert timer ended the command sets StorCtl_Mod again, because what the inverter holds is read,
 * not remembered.
 */
import { describe, expect, it } from 'vitest';
import type { RegisterReader } from '../../src/core/register-reader.js';
import type { RegisterWriter } from '../../src/core/storage-control.js';
import { M124, SunSpecStorageControl } from '../../src/profiles/sunspec-storage.js';
import type { InverterDevice } from '../../src/sim/device-images.js';
import { defaultSimConfig } from '../../src/sim/model.js';
import { SimSite } from '../../src/sim/site.js';

// a winter night: no PV, the house draws from the battery in self-consumption
const T0 = Date.parse('2026-01-15T00:00:00Z');

function rig() {
  const s = new SimSite(defaultSimConfig(), T0);
  const inverter = s.devices[0] as InverterDevice;
  const base = inverter.image.model(124).address;
  const bus: RegisterReader & RegisterWriter = {
    readHolding: async (u, a, n) => s.unit('inverter', u)!.holding[0]!.read(a, n),
    readInput: async () => {
      throw new Error('holding registers only');
    },
    writeHolding: async (u, a, values) => s.write('inverter', u, a, values),
  };
  const batteryW = () => s.snapshot().battery.reduce((a, b) => a + b.w, 0);
  const reg = (offset: number) => s.unit('inverter', 1)!.holding[0]!.read(base + offset, 1)[0]!;
  return { s, bus, batteryW, reg, control: new SunSpecStorageControl(1, base, 30) };
}

describe('SunSpec 124 storage control', () => {
  it('a keep-alive after the revert timer ran out sets StorCtl_Mod again', async () => {
    const { s, bus, batteryW, reg, control } = rig();
    await control.apply(bus, { mode: 'charge', powerW: 2000 });
    s.update(T0 + 10_000);
    expect(reg(M124.StorCtl_Mod)).toBe(3);
    expect(batteryW()).toBeCloseTo(2000, 0);
    // the gateway was late: the inverter's timer (30 s) ended the command
    s.update(T0 + 40_000);
    expect(reg(M124.StorCtl_Mod)).toBe(0);
    const writes = await control.apply(bus, { mode: 'charge', powerW: 2000 });
    expect(writes.map((w) => w.address)).toContain(control.address + M124.StorCtl_Mod);
    expect(reg(M124.StorCtl_Mod)).toBe(3);
    s.update(T0 + 50_000);
    expect(batteryW()).toBeCloseTo(2000, 0);
  });

  it('writes ChaGriSet and StorCtl_Mod only when the inverter holds another value', async () => {
    const { bus, control } = rig();
    const first = await control.apply(bus, { mode: 'charge', powerW: 2000 });
    expect(first.map((w) => w.address - control.address)).toEqual([M124.OutWRte, M124.ChaGriSet, M124.StorCtl_Mod]);
    const again = await control.apply(bus, { mode: 'charge', powerW: 2000 });
    // the rates with the timer only: that write restarts the timer
    expect(again.map((w) => w.address - control.address)).toEqual([M124.OutWRte]);
    const back = await control.apply(bus, { mode: 'self-consumption' });
    // ChaGriSet goes back to the value recorded before the charge set it (the executor, from
    // control_originals: read now, after a crash mid-charge, it would be the charge's 1)
    expect(back.map((w) => [w.address - control.address, w.values])).toEqual([[M124.StorCtl_Mod, [0]]]);
    expect(control.restoredWithSelfConsumption).toEqual([control.address + M124.ChaGriSet]);
  });
});
