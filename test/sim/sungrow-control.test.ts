/**
 * The simulated inverter as a Sungrow SH10RT (sungrow-sh.ts) commanded through the shipped
 * profile's control map over real Modbus TCP: the battery power follows the forced-mode command
 * within what the blocks can take and their SoC, and self-consumption gives the battery back to
 * the device's own dispatch. Registers are decoded here by hand from Sungrow's document (input
 * registers, the document's numbers minus one, 32-bit values low word first), not by the
 * gateway's decoders; the physics are read off the site model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceConfig } from '../../src/config/types.js';
import { ManualClock } from '../../src/core/clock.js';
import { createProfileControl } from '../../src/profiles/control.js';
import { ProfileDevice } from '../../src/profiles/engine.js';
import { loadProfiles } from '../../src/profiles/registry.js';
import { defaultSimConfig } from '../../src/sim/config.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { type ClientBus, connectClientBus } from '../support/client-bus.js';

const T0 = Date.parse('2026-01-15T02:00:00Z');
const UNIT = 10;

describe('simulated Sungrow SH10RT: EMS forced mode moves the battery', () => {
  const clock = new ManualClock(T0);
  // a winter night: no PV, so every watt of a forced charge comes from the grid
  const cfg = { ...defaultSimConfig(), sungrowUnitId: UNIT };
  const sim = new SimSite(cfg, T0);
  const control = createProfileControl(loadProfiles().get('sungrow-sh-rt')!, UNIT)!;
  let servers: SimServers;
  let bus: ClientBus;

  beforeAll(async () => {
    servers = await startSimServers(sim, clock);
    bus = await connectClientBus(servers.inverter.host, servers.inverter.port);
  });
  afterAll(async () => {
    await bus?.close();
    await servers?.close();
  });

  const batteryW = () => sim.snapshot().battery.reduce((a, b) => a + b.w, 0);
  const soc = () => {
    const bs = sim.snapshot().battery;
    return (bs.reduce((a, b) => a + b.storedWh, 0) / bs.reduce((a, b) => a + b.usableCapacityWh, 0)) * 100;
  };
  /** battery power as the document gives it: 13022 magnitude, 13001 bit 1 charging / bit 2 discharging */
  const wireBatteryW = async () => {
    const state = (await bus.readInput(UNIT, 13000, 1))[0]!;
    const magnitude = (await bus.readInput(UNIT, 13021, 1))[0]!;
    return state & 0x0004 ? -magnitude : state & 0x0002 ? magnitude : 0;
  };

  it('serves the document: device type SH10RT, EMS in self-consumption', async () => {
    expect(await bus.readInput(UNIT, 4999, 1)).toEqual([0x0e03]);
    expect(await bus.readHolding(UNIT, 13049, 3)).toEqual([0, 0xcc, 0]);
    expect(sim.model.storageControl?.(clock.now())).toBeNull();
  });

  it('a forced charge of 2,000 W charges at 2,000 W from the grid, and the SoC rises', async () => {
    const records = await control.apply(bus, { mode: 'charge', powerW: 2000 });
    expect(records.map((r) => r.address)).toEqual([13049, 13051, 13050]);
    expect(batteryW()).toBeCloseTo(2000, 6);
    expect(await wireBatteryW()).toBe(2000);
    const before = soc();
    clock.advance(600_000);
    expect(await wireBatteryW()).toBe(2000);
    // 10 minutes at 2 kW at 97 % charge efficiency into the usable capacity
    const usable = sim.snapshot().battery.reduce((a, b) => a + b.usableCapacityWh, 0);
    expect(soc() - before).toBeCloseTo((2000 * 0.97 * (10 / 60) * 100) / usable, 2);
    expect(sim.snapshot().gridW).toBeGreaterThan(2000);
  });

  it('the shipped sungrow-sh-rt profile reads the image: battery, SoC and grid as the model has them', async () => {
    const profile = loadProfiles().get('sungrow-sh-rt')!;
    const read = async (role: DeviceConfig['role']) => {
      const config: DeviceConfig = {
        id: 'sg',
        role,
        profile: profile.name,
        connection: { type: 'tcp', host: '127.0.0.1', port: servers.inverter.port, unitId: UNIT, timeoutMs: 2000 },
      };
      return (await new ProfileDevice(config, profile).poll(bus, () => clock.now())).readings[0]!.values;
    };
    const battery = await read('battery');
    expect(battery.power_W).toBe(2000);
    expect(battery.soc).toBeCloseTo(soc(), 1);
    expect((await read('grid-meter')).power_W).toBe(Math.round(sim.snapshot().gridW));
  });

  it('hold stops the battery; discharge 1,500 W discharges at 1,500 W', async () => {
    await control.apply(bus, { mode: 'hold' });
    expect(batteryW()).toBe(0);
    expect(await wireBatteryW()).toBe(0);
    await control.apply(bus, { mode: 'discharge', powerW: 1500 });
    expect(batteryW()).toBeCloseTo(-1500, 6);
    expect(await wireBatteryW()).toBe(-1500);
  });

  it('a command beyond the blocks is clipped to what they take, and to nothing once full', async () => {
    await control.apply(bus, { mode: 'charge', powerW: 9000 });
    const max = cfg.battery.blocks.reduce((a, b) => a + b.maxChargeW, 0);
    expect(batteryW()).toBeCloseTo(max, 6);
    // long enough to reach socMax: the blocks stop taking charge there
    clock.advance(3 * 3_600_000);
    await bus.readInput(UNIT, 13000, 1);
    expect(soc()).toBeCloseTo(cfg.battery.blocks[0]!.socMaxPct, 1);
    expect(batteryW()).toBeCloseTo(0, 3);
  });

  it('self-consumption returns the battery to the device: no window, and the command registers read so', async () => {
    await control.apply(bus, { mode: 'self-consumption' });
    expect(await bus.readHolding(UNIT, 13049, 2)).toEqual([0, 0xcc]);
    expect(sim.model.storageControl?.(clock.now())).toBeNull();
    // a night with a full battery: self-consumption covers the house from the battery
    clock.advance(60_000);
    await bus.readInput(UNIT, 13000, 1);
    expect(batteryW()).toBeLessThan(0);
    expect(Math.abs(sim.snapshot().gridW)).toBeLessThan(1);
  });

  it('a command value the document does not list is refused with an exception and changes nothing', async () => {
    await expect(bus.writeHolding(UNIT, 13050, [0x33])).rejects.toThrow();
    expect(await bus.readHolding(UNIT, 13049, 3)).toEqual([0, 0xcc, 9000]);
    await expect(bus.writeHolding(UNIT, 13052, [1])).rejects.toThrow();
  });
});
