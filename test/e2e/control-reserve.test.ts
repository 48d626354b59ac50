/**
 * The reserve state of charge end to end (docs/control.md "The reserve"): the demo's gateway
 * announces a Home Assistant number to a real mosquitto; a value published on its command topic
 * is stored, shown by the API and the number's state, survives a restart of the daemon, and moves
 * the battery: at night in self-consumption the simulated battery discharges into the house until
 * the reserve, set above its state of charge, stops it (SunSpec 124 written with both rates 0 and
 * the revert timer). Text, NaN and values out of range are refused: the number shows the reserve
 * in force again, nothing is stored, and not one register write follows. Backup charges a
 * battery below the reserve from the grid up to it and then gives nothing from it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reserveOf, writesOf } from '../../src/store/control.js';
import { customerTokens, partnerToken } from '../support/auth.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';
import { discoveryProblems } from '../support/ha-schema.js';
import {
  type Collector,
  collect,
  MOSQUITTO,
  mosquittoBroker,
  noteMosquittoSkipped,
  type TestBroker,
} from '../support/mqtt-brokers.js';

noteMosquittoSkipped('test/e2e/control-reserve.test.ts');

type Demo = Awaited<ReturnType<typeof demoSite>>;
const NUMBER = 'homeassistant/number/sitegw_demo-site/inverter_reserve_soc/config';
// a winter night: no PV, the house draws from the battery in self-consumption
const START = Date.parse('2026-01-15T01:00:00Z');

describe.skipIf(!MOSQUITTO)('the reserve state of charge from Home Assistant', () => {
  let broker: TestBroker;
  let demo: Demo;
  let token: string;
  let states: Collector;
  let config: { command_topic: string; state_topic: string; min: number; max: number };

  const soc = () => {
    const b = demo.sim.snapshot().battery;
    return b.reduce((a, x) => a + x.socPct, 0) / b.length;
  };
  const batteryW = () => demo.sim.snapshot().battery.reduce((a, x) => a + x.w, 0);
  const apiReserve = async () => {
    const { body } = await getJson(`${demo.url}/api/v1/devices`, token);
    return (body.devices as { deviceId: string; reserveSoc?: number }[]).find((x) => x.deviceId === 'inverter')
      ?.reserveSoc;
  };
  const audit = () => writesOf(demo.daemon.ctx.db, 'inverter');
  const set = (payload: string) => states.client.publishAsync(config.command_topic, payload, { qos: 1 });
  const lastState = () => states.messages.filter((m) => m.topic === config.state_topic).at(-1)?.payload;

  beforeAll(async () => {
    broker = await mosquittoBroker();
    demo = await demoSite({
      speed: 30,
      start: START,
      pollSeconds: 5,
      homeassistant: broker.url,
      configure: (cfg) => Object.assign(cfg.homeassistant!, { stateIntervalSeconds: 0.2 }),
    });
    token = await partnerToken(demo.credentials);
    states = await collect(broker.url, 'sitegw-ha/demo-site/devices/inverter/#');
    const c = await collect(broker.url, NUMBER);
    try {
      const m = await waitFor('the number config', () => c.messages.find((x) => x.topic === NUMBER && x.retain));
      expect(discoveryProblems(NUMBER, m.payload, 'homeassistant')).toEqual([]);
      config = JSON.parse(m.payload);
    } finally {
      await c.close();
    }
  });
  afterAll(async () => {
    await states?.close();
    await demo?.cleanup();
    await broker?.close();
  });

  it('offers the range control accepts, and refuses text, NaN and out of range without a write', async () => {
    const { socMin, socMax, reserveSoc } = demo.daemon.ctx.config.control;
    expect(config.min).toBe(Math.max(socMin, 10)); // the simulator's MinRsvPct is its blocks' socMin, 10
    expect(config.max).toBe(socMax);
    await waitFor('the reserve in force on the number', () => lastState() === String(reserveSoc));
    // the start's self-consumption is written; the battery is above the reserve: nothing more
    await waitFor('the start written', () => audit().length > 0);
    expect(soc()).toBeGreaterThan(reserveSoc + 5);
    const writes = audit().length;
    const requests = demo.sim.writeRequests;

    const bad = ['abc', 'NaN', '', String(socMax + 1), String(config.min - 1), '1e2', '0x1e'];
    const before = states.messages.length;
    for (const b of bad) await set(b);
    await waitFor(
      'every refusal answered with the reserve in force',
      () =>
        states.messages.slice(before).filter((m) => m.topic === config.state_topic).length >= bad.length || undefined,
    );
    expect(
      states.messages
        .slice(before)
        .filter((m) => m.topic === config.state_topic)
        .map((m) => m.payload),
    ).toEqual(bad.map(() => String(reserveSoc)));
    expect(reserveOf(demo.daemon.ctx.db, 'inverter')).toBeUndefined();
    expect(await apiReserve()).toBe(reserveSoc);
    // a few polls later, still not one write
    let polls = 0;
    const off = demo.daemon.ctx.bus.on('devicePolled', (e) => void (e.deviceId === 'inverter' && polls++));
    try {
      await waitFor('3 polls of the inverter', () => polls >= 3 || undefined);
    } finally {
      off();
    }
    expect(audit().length).toBe(writes);
    expect(demo.sim.writeRequests).toBe(requests);
  });

  it('a reserve above the state of charge is stored, survives a restart and stops the discharge', async () => {
    await waitFor('the battery discharging into the house', () => batteryW() < -100 || undefined);
    const reserve = Math.min(config.max, Math.ceil(soc()) + 3);
    const writes = audit().length;
    await set(String(reserve));
    await waitFor('the API to report the reserve', async () => (await apiReserve()) === reserve);
    expect(reserveOf(demo.daemon.ctx.db, 'inverter')).toMatchObject({ soc: reserve, changedBy: 'homeassistant' });
    await waitFor('the number state', () => lastState() === String(reserve));
    // the writes that follow: both rates 0 with the revert timer, then StorCtl_Mod 3, read back
    const revert = demo.daemon.ctx.config.control.revertSeconds;
    const rows = await waitFor('the reserve written', () => {
      const r = audit().slice(writes);
      return r.some((w) => w.values.length === 1 && w.values[0] === 3) ? r : undefined;
    });
    expect(rows[0]).toMatchObject({ writer: 'mode:self-consumption', values: [0, 0, 0, revert] });
    for (const w of rows) expect(w.readBack).toEqual(w.values);
    await waitFor('the battery standing still', () => Math.abs(batteryW()) < 50 || undefined);

    const n = states.messages.length;
    const afterRestart = audit().length;
    await demo.restartDaemon();
    token = await partnerToken(demo.credentials);
    expect(await apiReserve()).toBe(reserve);
    await waitFor('the number told again after the restart', () =>
      states.messages.slice(n).some((m) => m.topic === config.state_topic && m.payload === String(reserve)),
    );
    // the restarted gateway keeps the reserve: the battery is held, not let go (a start without
    // readings writes self-consumption first, then the reserve once the state of charge is read)
    await waitFor('the reserve written again after the restart', () =>
      audit()
        .slice(afterRestart)
        .some((w) => w.values.length === 1 && w.values[0] === 3),
    );
    await waitFor('the battery standing still again', () => Math.abs(batteryW()) < 50 || undefined);

    // a reserve below the state of charge lets the device's own self-consumption run again
    const low = config.min;
    const released = audit().length;
    await set(String(low));
    await waitFor('StorCtl_Mod 0 written', () =>
      audit()
        .slice(released)
        .some((w) => w.values.length === 1 && w.values[0] === 0),
    );
    await waitFor('the battery discharging again', () => batteryW() < -100 || undefined);
  });

  it('the owner sets it through PATCH reserveSoc too (design.md); bad ones are named 400s and change nothing', async () => {
    const owner = (await customerTokens(demo.credentials, 'svc/device.read svc/device.write')).access_token;
    const patch = async (body: unknown, bearer = owner) => {
      const r = await fetch(`${demo.url}/api/v1/devices/inverter__bb_agg`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return {
        status: r.status,
        body: (await r.json()) as { code?: string; reserveSoc?: number; operationMode?: string },
      };
    };
    const ok = await patch({ reserveSoc: 40 });
    expect(ok).toMatchObject({ status: 200, body: { reserveSoc: 40 } });
    expect(reserveOf(demo.daemon.ctx.db, 'inverter')).toMatchObject({ soc: 40, changedBy: 'customer' });
    // Home Assistant's number follows a change made elsewhere within a state interval
    await waitFor('the number state 40', () => lastState() === '40');

    const { socMax } = demo.daemon.ctx.config.control;
    expect((await patch({ reserveSoc: socMax + 1 })).body.code).toBe('RESERVE_OUT_OF_RANGE');
    expect((await patch({ reserveSoc: config.min - 1, operationMode: 'backup' })).body.code).toBe(
      'RESERVE_OUT_OF_RANGE',
    );
    const text = await patch({ reserveSoc: 'forty' });
    expect(text.status).toBe(400);
    expect((await patch({ reserveSoc: null })).status).toBe(400);
    // a partner holds no customer token: device.write is the owner's
    expect((await patch({ reserveSoc: 50 }, token)).status).toBe(403);
    const { body } = await getJson(`${demo.url}/api/v1/devices`, owner);
    const inv = (body.devices as { deviceId: string; reserveSoc?: number; operationMode?: string }[]).find(
      (x) => x.deviceId === 'inverter',
    );
    expect(inv).toMatchObject({ reserveSoc: 40, operationMode: 'self-consumption' });
    expect(reserveOf(demo.daemon.ctx.db, 'inverter')?.soc).toBe(40);
  });

  it('backup: below the reserve the battery charges from the grid up to it, then gives nothing', async () => {
    const owner = (await customerTokens(demo.credentials, 'svc/device.read svc/device.write')).access_token;
    const reserve = Math.min(config.max, Math.ceil(soc()) + 1);
    const r = await fetch(`${demo.url}/api/v1/devices/inverter`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reserveSoc: reserve, operationMode: 'backup' }),
    });
    expect(r.status).toBe(200);
    // a night without PV: the charge comes from the grid (control.gridCharge is true in the demo)
    const charging = await waitFor('the battery charging from the grid', () => {
      const s = demo.sim.snapshot();
      return batteryW() > 1000 && s.gridW > batteryW() ? s : undefined;
    });
    expect(charging.pvW.reduce((a, b) => a + b, 0)).toBe(0);
    // audited once the command's last write is read back
    await waitFor('the backup charge audited', () => audit().some((w) => w.writer === 'mode:backup'));
    // as the device reports it: its register's 0.1 % (the simulator's own count stopped at 50.99 of 51)
    await waitFor('the reserve reached', () => soc() >= reserve - 0.1 || undefined, 60_000);
    await waitFor('the battery standing at the reserve', () => Math.abs(batteryW()) < 50 || undefined);
    // held there, poll after poll: the house draws from the grid, not from the reserve
    let polls = 0;
    let lowest = Number.POSITIVE_INFINITY;
    const off = demo.daemon.ctx.bus.on('devicePolled', (e) => {
      if (e.deviceId !== 'inverter') return;
      polls++;
      lowest = Math.min(lowest, batteryW());
    });
    try {
      await waitFor('3 polls at the reserve', () => polls >= 3 || undefined);
    } finally {
      off();
    }
    expect(lowest).toBeGreaterThan(-50);
    expect(soc()).toBeGreaterThanOrEqual(reserve - 0.1);
  });
});
