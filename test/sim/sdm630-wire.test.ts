/**
 * The simulated Eastron SDM630 on the wire, decoded by hand from the register document (Eastron
 * "SDM630 Modbus Protocol" V2.0): FC4 input registers, IEEE 754 float32 with the high word first,
 * start addresses from the document's hex column; FC3 holding 0x000A system type and 0xFC00
 * serial number. Values are compared with the site model's snapshot, not with the encoder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { defaultSimConfig } from '../../src/sim/config.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { ModbusClient } from './modbus-client.js';

const T0 = Date.parse('2026-06-21T11:00:00Z');

/** float32 big-endian from two registers, high word first, as the document specifies */
function f32(regs: number[], at: number): number {
  const b = Buffer.alloc(4);
  b.writeUInt16BE(regs[at]!, 0);
  b.writeUInt16BE(regs[at + 1]!, 2);
  return b.readFloatBE(0);
}

describe('simulated Eastron SDM630 grid meter over Modbus TCP', () => {
  const clock = new ManualClock(T0);
  const sim = new SimSite({ ...defaultSimConfig(), gridMeter: 'sdm630' }, T0 - 6 * 3_600_000);
  let servers: SimServers;
  const client = new ModbusClient();

  beforeAll(async () => {
    servers = await startSimServers(sim, clock);
    await client.connectTCP(servers.meter.host, { port: servers.meter.port });
    client.setID(1);
    client.setTimeout(2000);
  });
  afterAll(async () => {
    client.close(() => undefined);
    await servers?.close();
  });

  const input = async (address: number, n: number) => (await client.readInputRegisters(address, n)).data;

  it('reports power, phase voltages, frequency and energy of the grid connection point', async () => {
    const regs = await input(0x0000, 0x50);
    const s = sim.snapshot();
    expect(s.ts).toBe(T0);
    // 30001..30005 phase 1..3 line to neutral volts
    for (let p = 0; p < 3; p++) expect(f32(regs, 2 * p)).toBeCloseTo(s.gridPhaseV[p]!, 2);
    // 30053 total system power, + import / - export
    expect(f32(regs, 0x34)).toBeCloseTo(s.gridW, 0);
    // 30013..30017 phase powers add up to it
    expect(f32(regs, 0x0c) + f32(regs, 0x0e) + f32(regs, 0x10)).toBeCloseTo(s.gridW, 0);
    // 30071 frequency
    expect(f32(regs, 0x46)).toBeCloseTo(s.gridHz, 3);
    // 30073 / 30075 total import / export, kWh
    expect(f32(regs, 0x48)).toBeCloseTo(s.counters.gridImportWh / 1000, 3);
    expect(f32(regs, 0x4a)).toBeCloseTo(s.counters.gridExportWh / 1000, 3);
    expect(s.counters.gridImportWh + s.counters.gridExportWh).toBeGreaterThan(0);
    // 30201 L1-L2 volts: √3 × phase volts on a balanced system
    const ll = await input(0x00c8, 2);
    expect(f32(ll, 0)).toBeCloseTo(Math.sqrt(3) * s.gridPhaseV[0]!, 0);
  });

  it('identifies itself: system type 3 (3 phase 4 wire) and a serial number in holding registers', async () => {
    const type = (await client.readHoldingRegisters(0x000a, 2)).data;
    expect(f32(type, 0)).toBe(3);
    const serial = (await client.readHoldingRegisters(0xfc00, 2)).data;
    const n = serial[0]! * 0x10000 + serial[1]!;
    expect(n).toBeGreaterThan(0);
    expect(String(n)).toBe(sim.identities().find((d) => d.role === 'grid_meter')!.serial);
  });

  it('is not a SunSpec device: no SunS marker, no input registers for the SunSpec meter beside it', async () => {
    await expect(client.readHoldingRegisters(40000, 2)).rejects.toMatchObject({ modbusCode: 2 });
    client.setID(2);
    try {
      await expect(client.readInputRegisters(0, 2)).rejects.toMatchObject({ modbusCode: 1 });
    } finally {
      client.setID(1);
    }
  });

  it('reads 0 V, 0 W and 0 Hz while the grid is out, and keeps its energy totals', async () => {
    const before = await input(0x0048, 4);
    sim.setGridOutage(true);
    try {
      const regs = await input(0x0000, 0x50);
      for (let p = 0; p < 3; p++) expect(f32(regs, 2 * p)).toBe(0);
      expect(f32(regs, 0x34)).toBe(0);
      expect(f32(regs, 0x46)).toBe(0);
      expect(f32(regs, 0x48)).toBe(f32(before, 0));
      expect(f32(regs, 0x4a)).toBe(f32(before, 2));
    } finally {
      sim.setGridOutage(false);
    }
  });
});
