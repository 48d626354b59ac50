import { describe, expect, it } from 'vitest';
import type { Reading } from '../../src/core/channels.js';
import { ManualClock } from '../../src/core/clock.js';
import { EventBus } from '../../src/core/events.js';
import { silentLogger } from '../../src/core/log.js';
import type { RegisterReader } from '../../src/core/register-reader.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { SimMemoryReader } from '../../src/demo/memory-reader.js';
import { ModbusError } from '../../src/modbus/errors.js';
import { Poller } from '../../src/poller/poller.js';
import { SimSite } from '../../src/sim/site.js';
import { Site } from '../../src/site/site.js';

const T0 = Date.parse('2026-06-21T10:00:00Z');
const EP = { inverter: { host: '127.0.0.1', port: 1502 }, meter: { host: '127.0.0.1', port: 1503 } };

function setup(edit?: (yaml: ReturnType<typeof demoSiteConfig>) => void) {
  const config = demoSiteConfig(EP, {
    httpHost: '127.0.0.1',
    httpPort: 0,
    dataDir: '/tmp/unused',
    pollSeconds: 10,
    batteryBlocks: 2,
  });
  edit?.(config);
  const sim = new SimSite(undefined, T0);
  const clock = new ManualClock(T0);
  const bus = new EventBus();
  const site = new Site(config);
  const readings: Reading[] = [];
  bus.on('reading', (r) => readings.push(r));
  const meterDown = { on: false };
  const inverter = new SimMemoryReader(sim, 'inverter');
  const meterReal = new SimMemoryReader(sim, 'meter');
  const meter: RegisterReader = {
    readHolding: async (u, a, n) => {
      if (meterDown.on) throw new ModbusError('timeout', 'no answer before the timeout');
      return meterReal.readHolding(u, a, n);
    },
    readInput: (u, a, n) => meterReal.readInput(u, a, n),
  };
  const poller = new Poller({
    site,
    bus,
    clock,
    log: silentLogger(),
    readerFor: (d) => (d.connection.type === 'tcp' && d.connection.port === EP.meter.port ? meter : inverter),
  });
  const cycle = async (t: number) => {
    sim.update(t);
    return poller.cycle(() => t);
  };
  return { sim, site, poller, readings, cycle, meterDown };
}

describe('Poller', () => {
  it('turns one cycle into spec readings with design.md signs and builds __bb_agg from every block', async () => {
    const { cycle, sim, site } = setup();
    const rs = await cycle(T0);
    const by = new Map(rs.map((r) => [r.streamId, r]));
    const snap = sim.snapshot();
    // battery: + charging
    const blocks = snap.battery;
    expect(by.get('battery-1')!.values.power_W).toBeCloseTo(blocks[0]!.w, 0);
    expect(by.get('inverter__bb_agg')!.values.power_W).toBeCloseTo(blocks[0]!.w + blocks[1]!.w, 0);
    expect(by.get('inverter__bb_agg')!.values.soc).toBeCloseTo((blocks[0]!.socPct + blocks[1]!.socPct) / 2, 1);
    // PV: − while producing; inverter AC: − while delivering
    expect(by.get('inverter__dcm')!.values.power_W).toBeLessThan(0);
    expect(by.get('inverter__dcm')!.values.power_W).toBeCloseTo(-snap.pvW.reduce((a, b) => a + b, 0), 0);
    expect(Math.sign(by.get('inverter')!.values.power_AC_W!)).toBe(-Math.sign(snap.inverter.acW) || 0);
    // grid: + importing
    expect(by.get('grid-meter__GRID_METER_DERIVED')!.values.power_W).toBeCloseTo(snap.gridW, 0);
    expect(by.get('grid-meter__GRID_METER_DERIVED')!.values.state).toBe('ok');
    expect(by.get('house-meter')!.values.power_W).toBeCloseTo(snap.houseW, 0);
    // what the devices said about themselves
    expect(site.devices.get('inverter')!.pvModules).toBe(snap.pvW.length);
    expect(site.devices.get('battery-1')!.capacityWh).toBe(5000);
    expect(site.devices.get('grid-meter')!.identity.manufacturer).toBe('sitegw-sim');
  });

  it('polls each device on its own period', async () => {
    const { cycle, readings } = setup((c) => {
      for (const d of c.devices) if (d.role === 'battery') d.pollIntervalSeconds = 30;
    });
    for (let t = T0; t < T0 + 60_000; t += 10_000) await cycle(t);
    const count = (id: string) => readings.filter((r) => r.streamId === id).length;
    expect(count('inverter')).toBe(6);
    expect(count('battery-1')).toBe(2);
    expect(count('inverter__bb_agg')).toBe(2);
  });

  it('a silent grid meter makes the relay state unknown, marks the device offline, and recovers', async () => {
    const { cycle, meterDown, site, readings } = setup();
    await cycle(T0);
    meterDown.on = true;
    await cycle(T0 + 10_000);
    const grid = readings.filter((r) => r.streamId === 'grid-meter__GRID_METER_DERIVED');
    expect(grid.at(-1)!.values).toEqual({ state: 'unknown' });
    const dev = site.devices.get('grid-meter')!;
    expect(dev.online).toBe(false);
    expect(dev.errors.timeout).toBe(1);
    expect(dev.lastError).toMatch(/timeout/);
    meterDown.on = false;
    await cycle(T0 + 20_000);
    expect(readings.filter((r) => r.streamId === 'grid-meter__GRID_METER_DERIVED').at(-1)!.values.state).toBe('ok');
    expect(site.devices.get('grid-meter')!.online).toBe(true);
  });

  it('an opened relay reads as not_present', async () => {
    const { cycle, sim, readings } = setup();
    sim.setGridOutage(true);
    await cycle(T0 + 10_000);
    const grid = readings.filter((r) => r.streamId === 'grid-meter__GRID_METER_DERIVED').at(-1)!;
    expect(grid.values.state).toBe('not_present');
    expect(grid.values.power_W).toBe(0);
  });
});
