/**
 * The simulator as the gateway meets it: a real Modbus TCP client, registers decoded by hand with
 * offsets taken from the SunSpec model definitions (not from our layout tables or encoder), and
 * compared with the physical model's snapshot.
 */
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { itemAt } from '../../src/core/item-at.js';
import { defaultSimConfig } from '../../src/sim/config.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { ModbusClient } from './modbus-client.js';

/** a register read from the image: one past what was read is a failed test, not undefined */
function word(x: number | undefined): number {
  if (x === undefined) throw new RangeError('register outside what was read');
  return x;
}
const int16 = (x: number | undefined) => {
  const w = word(x);
  return w >= 0x8000 ? w - 0x10000 : w;
};
const u32 = (r: number[], i: number) => itemAt(r, i) * 0x10000 + itemAt(r, i + 1);
const scaled = (raw: number | undefined, sfReg: number | undefined) => word(raw) * 10 ** int16(sfReg);
function text(regs: number[]): string {
  let s = '';
  for (const r of regs) s += String.fromCharCode(r >> 8, r & 0xff);
  return s.replace(/\0+$/, '');
}
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

type Client = ModbusClient;

async function read(c: Client, unit: number, addr: number, len: number): Promise<number[]> {
  c.setID(unit);
  const out: number[] = [];
  for (let at = addr; at < addr + len; at += 100) {
    const n = Math.min(100, addr + len - at);
    out.push(...(await c.readHoldingRegisters(at, n)).data);
  }
  return out;
}

async function exceptionCode(p: Promise<unknown>): Promise<number | undefined> {
  try {
    await p;
  } catch (err) {
    return (err as { modbusCode?: number }).modbusCode;
  }
  return undefined;
}

interface ModelAt {
  id: number;
  len: number;
  /** address of the first point after ID and L */
  addr: number;
  regs: number[];
}

/** walk the chain from 40000 the way discovery does */
async function chain(c: Client, unit: number): Promise<{ marker: number[]; models: ModelAt[]; end: number }> {
  const marker = await read(c, unit, 40000, 2);
  const models: ModelAt[] = [];
  let at = 40002;
  for (;;) {
    const head = await read(c, unit, at, 2);
    const id = itemAt(head, 0);
    const len = itemAt(head, 1);
    if (id === 0xffff) {
      expect(len).toBe(0);
      return { marker, models, end: at + 2 };
    }
    models.push({ id, len, addr: at + 2, regs: await read(c, unit, at + 2, len) });
    at += 2 + len;
    if (models.length > 10) throw new Error('runaway chain');
  }
}

const START = DateTime.fromISO('2024-06-21T12:30', { zone: 'Europe/Berlin' }).toMillis();

describe('simulated site over Modbus TCP', () => {
  const clock = new ManualClock(START);
  const site = new SimSite(defaultSimConfig(), START);
  let servers: SimServers;
  const client: Client = new ModbusClient();
  const meter: Client = new ModbusClient();

  beforeAll(async () => {
    servers = await startSimServers(site, clock, { host: '127.0.0.1' });
    await client.connectTCP(servers.inverter.host, { port: servers.inverter.port });
    await meter.connectTCP(servers.meter.host, { port: servers.meter.port });
    client.setTimeout(2000);
    meter.setTimeout(2000);
  });
  afterAll(async () => {
    await new Promise<void>((r) => client.close(() => r()));
    await new Promise<void>((r) => meter.close(() => r()));
    await servers.close();
  });

  it('serves SunS, the common model and the inverter chain 1 → 103 → 160 → 124 → end', async () => {
    const { marker, models } = await chain(client, 1);
    expect(text(marker)).toBe('SunS');
    expect(models.map((m) => [m.id, m.len])).toEqual([
      [1, 66],
      [103, 50],
      [160, 8 + 4 * 20],
      [124, 24],
    ]);
    const common = itemAt(models, 0).regs;
    expect(text(common.slice(0, 16))).toBe('sitegw-sim');
    expect(text(common.slice(16, 32))).toBe('HYB-6000');
    expect(common.slice(32, 40).every((r) => r === 0)).toBe(true); // Opt: not implemented
    expect(text(common.slice(40, 48))).toMatch(/^\d+\.\d+\.\d+$/);
    const inv = site.identities().find((d) => d.role === 'inverter')!;
    expect(text(common.slice(48, 64))).toBe(inv.serial);
    expect(common[64]).toBe(1); // DA
    expect(common[65]).toBe(0x8000); // Pad
  });

  it('inverter values decode to the model snapshot, unimplemented points hold sentinels', async () => {
    const { models } = await chain(client, 1);
    const s = site.snapshot();
    const r = itemAt(models, 1).regs; // 103
    expect(Math.abs(scaled(int16(r[12]), r[13]) - s.inverter.acW)).toBeLessThanOrEqual(0.5 * 10 ** int16(r[13]));
    expect(s.inverter.acW).toBeGreaterThan(100); // midsummer noon: producing
    expect(scaled(u32(r, 22), r[24])).toBe(Math.floor(s.counters.inverterAcDeliveredWh));
    expect(Math.abs(scaled(int16(r[29]), r[30]) - s.inverter.dcW)).toBeLessThanOrEqual(0.5);
    expect(scaled(r[8], r[11])).toBeCloseTo(s.housePhaseV[0], 1);
    expect(scaled(r[14], r[15])).toBeCloseTo(50, 1);
    expect(r[36]).toBe(4); // St: MPPT
    expect([r[18], r[19], r[20], r[21]]).toEqual([0x8000, 0x8000, 0x8000, 0x8000]); // VAr, PF and their SFs
    expect(r[33]).toBe(0x8000); // TmpTrns
    expect(r[37]).toBe(0xffff); // StVnd
    expect(r.slice(42, 50).every((x) => x === 0xffff)).toBe(true); // EvtVnd1..4

    const m = itemAt(models, 2).regs; // 160
    expect(m[6]).toBe(4); // N
    expect(m[7]).toBe(0xffff); // TmsPer not implemented
    for (let i = 0; i < 4; i++) {
      const b = m.slice(8 + 20 * i, 28 + 20 * i);
      expect(b[0]).toBe(i + 1);
      expect(text(b.slice(1, 9))).toBe(`PV${i + 1}`);
      expect(Math.abs(scaled(b[11], m[2]) - itemAt(s.pvW, i))).toBeLessThanOrEqual(0.5);
      expect(scaled(u32(b, 12), m[3])).toBe(Math.floor(itemAt(s.counters.pvProducedWh, i)));
      expect(scaled(b[9], m[0]) * scaled(b[10], m[1])).toBeCloseTo(itemAt(s.pvW, i), -1); // A·V ≈ W
      expect(b[17]).toBe(4); // DCSt: MPPT
    }

    const st = itemAt(models, 3).regs; // 124
    const soc = (100 * sum(s.battery.map((b) => b.storedWh))) / sum(s.battery.map((b) => b.usableCapacityWh));
    expect(scaled(st[6], st[20])).toBeCloseTo(soc, 1);
    expect(scaled(st[0], st[16])).toBe(5000); // WChaMax
    expect(st[17]).toBe(0x8000); // WChaDisChaGra_SF not implemented
  });

  it('battery units speak 1 → 802 with discharge-positive W', async () => {
    const idents = site.identities().filter((d) => d.role === 'battery');
    expect(idents.map((d) => d.unitId)).toEqual([2, 3]);
    for (const [j, ident] of idents.entries()) {
      const { models } = await chain(client, ident.unitId);
      expect(models.map((m) => [m.id, m.len])).toEqual([
        [1, 66],
        [802, 62],
      ]);
      expect(text(itemAt(models, 0).regs.slice(48, 64))).toBe(ident.serial);
      const r = itemAt(models, 1).regs;
      const b = itemAt(site.snapshot().battery, j);
      expect(scaled(r[1], r[51])).toBe(5000); // WHRtg
      expect(scaled(r[9], r[54])).toBeCloseTo(b.socPct, 1);
      expect(scaled(r[5], r[54])).toBe(95);
      expect(scaled(r[6], r[54])).toBe(10);
      expect(scaled(int16(r[45]), r[61])).toBe(Math.round(-b.w));
      expect(r[20]).toBe(3); // State CONNECTED
      expect(r[47]).toBe(0x8000); // ReqW not implemented
    }
    const serials = new Set(site.identities().map((d) => d.serial));
    expect(serials.size).toBe(site.identities().length);
  });

  it('meters speak 1 → 203: grid W + import, consumption W + consumed, lifetime counters', async () => {
    clock.advance(3 * 3_600_000);
    const grid = await chain(meter, 1);
    const house = await chain(meter, 2);
    const s = site.snapshot();
    expect(s.ts).toBe(clock.now());
    for (const m of [grid, house]) {
      expect(m.models.map((x) => [x.id, x.len])).toEqual([
        [1, 66],
        [203, 105],
      ]);
    }
    const g = itemAt(grid.models, 1).regs;
    const h = itemAt(house.models, 1).regs;
    expect(scaled(int16(g[16]), g[20])).toBe(Math.round(s.gridW));
    expect(scaled(int16(h[16]), h[20])).toBe(Math.round(s.houseW));
    expect(scaled(u32(g, 44), g[52])).toBe(Math.floor(s.counters.gridImportWh));
    expect(scaled(u32(g, 36), g[52])).toBe(Math.floor(s.counters.gridExportWh));
    expect(scaled(u32(h, 44), h[52])).toBe(Math.floor(s.counters.houseConsumedWh));
    expect(scaled(u32(h, 44), h[52])).toBeGreaterThan(500); // three hours of a house
    for (const v of [g[6], g[7], g[8]]) expect(scaled(int16(v), g[13])).toBeGreaterThan(220);
    expect(scaled(int16(g[14]), g[15])).toBeCloseTo(50, 0);
    expect(u32(g, 103)).toBe(0); // Evt: nothing
    expect(g[26]).toBe(0x8000); // VAR not implemented
    expect(u32(g, 38)).toBe(0); // per-phase energy: acc32 not implemented
  });

  it('follows the clock lazily: a later request sees later counters', async () => {
    const before = await read(meter, 2, 40002 + 2 + 66 + 2 + 44, 2);
    clock.advance(600_000);
    const after = await read(meter, 2, 40002 + 2 + 66 + 2 + 44, 2);
    expect(u32(after, 0)).toBeGreaterThan(u32(before, 0));
    expect(site.time).toBe(clock.now());
  });

  it('reports a grid outage: grid W exactly 0, 0 V and POWER_FAILURE, house still supplied', async () => {
    site.setGridOutage(true);
    try {
      const g = itemAt((await chain(meter, 1)).models, 1).regs;
      expect(int16(g[16])).toBe(0);
      expect([g[5], g[6], g[7], g[8]]).toEqual([0, 0, 0, 0]);
      expect(u32(g, 103) & 4).toBe(4);
      const h = itemAt((await chain(meter, 2)).models, 1).regs;
      expect(int16(h[16])).toBeGreaterThan(0);
      expect(u32(h, 103)).toBe(0);
    } finally {
      site.setGridOutage(false);
    }
    const g = itemAt((await chain(meter, 1)).models, 1).regs;
    expect(u32(g, 103)).toBe(0);
    expect(g[6]).toBeGreaterThan(2200);
  });

  it('answers exception 2 outside the image, 1 for input registers, 0x0B for an absent unit', async () => {
    const { end } = await chain(client, 1);
    client.setID(1);
    expect(await exceptionCode(client.readHoldingRegisters(end, 1))).toBe(2);
    expect(await exceptionCode(client.readHoldingRegisters(end - 1, 2))).toBe(2);
    expect(await exceptionCode(client.readHoldingRegisters(39999, 4))).toBe(2);
    expect(await exceptionCode(client.readHoldingRegisters(0, 10))).toBe(2);
    expect(await exceptionCode(client.readHoldingRegisters(end - 2, 2))).toBeUndefined();
    expect(await exceptionCode(client.readInputRegisters(40000, 2))).toBe(1);
    client.setID(9);
    expect(await exceptionCode(client.readHoldingRegisters(40000, 2))).toBe(11);
    meter.setID(3);
    expect(await exceptionCode(meter.readHoldingRegisters(40000, 2))).toBe(11);
  });
});

describe('startSimServers lifecycle', () => {
  it('frees its ports on close, many times over', async () => {
    const site = new SimSite(defaultSimConfig(), START);
    const clock = new ManualClock(START);
    for (let i = 0; i < 5; i++) {
      const s = await startSimServers(site, clock);
      expect(s.inverter.port).not.toBe(s.meter.port);
      const c = new ModbusClient();
      await c.connectTCP('127.0.0.1', { port: s.meter.port });
      c.setID(1);
      expect((await c.readHoldingRegisters(40000, 2)).data).toEqual([0x5375, 0x6e53]);
      await s.close();
      await new Promise<void>((r) => c.close(() => r()));
      const probe = new ModbusClient();
      await expect(probe.connectTCP('127.0.0.1', { port: s.meter.port })).rejects.toThrow();
    }
  });

  it('binds the fixed ports it is given and says so when one is taken', async () => {
    const site = new SimSite(defaultSimConfig(), START);
    const clock = new ManualClock(START);
    const a = await startSimServers(site, clock);
    try {
      await expect(startSimServers(site, clock, { inverterPort: a.inverter.port })).rejects.toThrow(/EADDRINUSE/);
      const free = a.inverter.port; // reused below once closed
      await a.close();
      const b = await startSimServers(site, clock, { inverterPort: free });
      expect(b.inverter.port).toBe(free);
      await b.close();
    } finally {
      await a.close();
    }
  });
});
