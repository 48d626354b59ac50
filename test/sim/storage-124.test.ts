/**
 * The simulated inverter's SunSpec 124 storage control (src/sim/storage-124.ts): battery power
 * follows the commanded window within the blocks' limits and SoC, the revert timer ends a
 * command, and only the control points take writes.
 */
import { describe, expect, it } from 'vitest';
import { M124 } from '../../src/profiles/sunspec-storage.js';
import type { InverterDevice } from '../../src/sim/device-images.js';
import { defaultSimConfig } from '../../src/sim/model.js';
import { SimSite } from '../../src/sim/site.js';

// a winter night: no PV, the house draws from the battery in self-consumption
const T0 = Date.parse('2026-01-15T00:00:00Z');
const site = () => {
  const s = new SimSite(defaultSimConfig(), T0);
  const m = (s.devices[0] as InverterDevice).image.model(124);
  return { s, at: (offset: number) => m.address + offset };
};
const batteryW = (s: SimSite) => s.snapshot().battery.reduce((a, b) => a + b.w, 0);
const pct = (w: number) => Math.round((w / 5000) * 10000) & 0xffff; // WChaMax 5,000 W, InOutWRte_SF −2

describe('SunSpec 124 in the simulator', () => {
  it('a pinned charge moves the battery at that power, from the grid', () => {
    const { s, at } = site();
    expect(batteryW(s)).toBeLessThan(0);
    s.write('inverter', 1, at(M124.OutWRte), [pct(-2000), pct(2000), 0, 60]);
    s.write('inverter', 1, at(M124.ChaGriSet), [1]);
    s.write('inverter', 1, at(M124.StorCtl_Mod), [3]);
    s.update(T0 + 60_000);
    expect(batteryW(s)).toBeCloseTo(2000, 0);
    expect(s.snapshot().gridW).toBeGreaterThan(2000);
  });

  it('hold stops the battery; the revert timer returns it to self-consumption', () => {
    const { s, at } = site();
    s.write('inverter', 1, at(M124.OutWRte), [0, 0, 0, 30]);
    s.write('inverter', 1, at(M124.StorCtl_Mod), [3]);
    s.update(T0 + 29_000);
    expect(batteryW(s)).toBe(0);
    s.update(T0 + 31_000);
    expect(batteryW(s)).toBeLessThan(0);
    expect((s.devices[0] as InverterDevice).control.revertedAt).toBe(T0 + 30_000);
  });

  it('with InOutWRte_RvrtTms 0 a command stays (the hazard the gateway never writes)', () => {
    const { s, at } = site();
    s.write('inverter', 1, at(M124.OutWRte), [0, 0, 0, 0]);
    s.write('inverter', 1, at(M124.StorCtl_Mod), [3]);
    s.update(T0 + 3_600_000);
    expect(batteryW(s)).toBe(0);
  });

  it('ChaGriSet PV (the device default) keeps a charge to PV surplus', () => {
    const { s, at } = site();
    s.write('inverter', 1, at(M124.OutWRte), [pct(-2000), pct(2000), 0, 0]);
    s.write('inverter', 1, at(M124.ChaGriSet), [0]);
    s.write('inverter', 1, at(M124.StorCtl_Mod), [3]);
    s.update(T0 + 60_000);
    // no PV at night: nothing to charge from
    expect(batteryW(s)).toBe(0);
  });

  it('refuses writes outside the control points (exception 2) and to units without controls (exception 1)', () => {
    const { s, at } = site();
    expect(() => s.write('inverter', 1, at(M124.WChaMax), [1])).toThrow(
      expect.objectContaining({ modbusErrorCode: 2 }),
    );
    expect(() => s.write('inverter', 2, 40000, [1])).toThrow(expect.objectContaining({ modbusErrorCode: 1 }));
    expect(s.writeRequests).toBe(2);
  });
});
