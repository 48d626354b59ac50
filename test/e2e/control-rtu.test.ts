/**
 * Control writes over Modbus RTU (docs/control.md "How it works"): the simulator's inverter host
 * (the hybrid inverter at unit 1 with SunSpec model 124, its battery blocks at units 2 and 3)
 * served on one end of a socat pty pair, the daemon on the other end as its RS-485 line. A plan's
 * charge slot goes out as FC16 frames, is read back over the same line (the audit's read-back
 * equals what was written), and the simulated battery follows it; `DELETE` of the plan returns
 * the inverter to self-consumption the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceConnection } from '../../src/config/types.js';
import { M124 } from '../../src/profiles/sunspec-storage.js';
import type { InverterDevice } from '../../src/sim/device-images.js';
import { type SimRtuServer, startSimRtuServer } from '../../src/sim/rtu-server.js';
import { writesOf } from '../../src/store/control.js';
import { partnerToken } from '../support/auth.js';
import { demoSite, waitFor } from '../support/demo.js';
import { HAVE_SOCAT, type PtyPair, ptyPair } from '../support/socat.js';

const Q = 15 * 60_000;
// a winter night: the battery moves only as commanded
const START = Date.parse('2026-01-15T01:00:00Z');
const BAUD = 115200;

describe.skipIf(!HAVE_SOCAT)('a plan written to the inverter over an RS-485 line (Modbus RTU over socat)', () => {
  let line: PtyPair;
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let rtu: SimRtuServer;
  let token: string;

  const rtuConnection = (unitId: number): DeviceConnection => ({
    type: 'rtu',
    device: line.b,
    baudRate: BAUD,
    parity: 'none',
    dataBits: 8,
    stopBits: 1,
    unitId,
    timeoutMs: 500,
  });
  const inverter = () => demo.sim.devices[0] as InverterDevice;
  const reg124 = (offset: number) => {
    const bank = demo.sim.unit('inverter', 1)!.holding[0]!;
    return bank.read(inverter().image.model(124).address + offset, 1)[0]!;
  };
  const batteryW = () => demo.sim.snapshot().battery.reduce((a, b) => a + b.w, 0);
  const audit = () => writesOf(demo.daemon.ctx.db, 'inverter');

  beforeAll(async () => {
    line = await ptyPair();
    demo = await demoSite({
      speed: 60,
      start: START,
      pollSeconds: 5,
      configure: (config) => {
        for (const d of config.devices)
          if (d.id === 'inverter' || d.role === 'battery') {
            if (d.connection.type !== 'tcp') throw new Error(`${d.id} is not on TCP in the demo`);
            d.connection = rtuConnection(d.connection.unitId);
          }
      },
    });
    rtu = await startSimRtuServer(demo.sim, demo.clock, { path: line.a, host: 'inverter', baudRate: BAUD });
    token = await partnerToken(demo.credentials);
  });
  afterAll(async () => {
    await demo?.cleanup();
    await rtu?.close();
    await line?.close();
  });

  it('the charge reaches the inverter, reads back, and moves the battery; DELETE returns it to self-consumption', async () => {
    const site = demo.daemon.site;
    await waitFor(
      'the inverter and its batteries online over RTU',
      () => [...site.devices.values()].every((d) => d.online),
      30_000,
    );
    const requests = demo.sim.writeRequests;
    const start = Math.floor(demo.clock.now() / Q) * Q;
    const url = `${demo.url}/api/v1/devices/inverter/plan`;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const interval = `${new Date(start).toISOString()}/${new Date(start + 2 * Q).toISOString()}`;
    const put = await fetch(url, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ slots: [{ interval, mode: 'charge', powerW: 2000 }] }),
    });
    expect(put.status, await put.clone().text()).toBe(200);

    // audited once the last write of the command is read back
    const planned = await waitFor(
      'the charge written and audited',
      () => {
        const rows = audit().filter((w) => w.writer === 'partner:demo-partner');
        return rows.length >= 3 ? rows.slice(0, 3) : undefined;
      },
      30_000,
    );
    expect(reg124(M124.StorCtl_Mod)).toBe(3);
    expect(reg124(M124.InOutWRte_RvrtTms)).toBe(demo.daemon.ctx.config.control.revertSeconds);
    expect(reg124(M124.ChaGriSet)).toBe(1);
    // the rates with the timer, grid charging, the control mode: each read back over the line
    expect(planned.map((w) => w.values.length)).toEqual([4, 1, 1]);
    for (const w of planned) expect(w.readBack).toEqual(w.values);
    expect(demo.sim.writeRequests - requests).toBeGreaterThanOrEqual(planned.length);
    await waitFor('the battery charging at 2,000 W', () => Math.abs(batteryW() - 2000) < 100 || undefined, 30_000);

    const deletedAt = demo.clock.now();
    const del = await fetch(url, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    expect(del.status).toBe(204);
    const back = await waitFor(
      'self-consumption written and audited',
      () => {
        // DELETE leaves the mode plan for self-consumption: the writer names it
        const rows = audit().filter((w) => w.atMs >= deletedAt && w.writer === 'mode:self-consumption');
        return rows.some((w) => w.values.length === 1 && w.values[0] === 0) ? rows : undefined;
      },
      30_000,
    );
    expect(reg124(M124.StorCtl_Mod)).toBe(0);
    for (const w of back) expect(w.readBack).toEqual(w.values);
  });
});
