import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TopoNode } from '../../src/site/topology.js';
import { basic, bearer, clientToken, ownerToken as ownerTokenOf, postForm } from '../support/auth.js';
import { demoSite, waitFor } from '../support/demo.js';
import { sensorsOf } from '../support/topology.js';
import { StreamClient, tryUpgrade } from '../support/ws-client.js';

const Q = 15 * 60 * 1000;

type Demo = Awaited<ReturnType<typeof demoSite>>;

const ownerToken = (demo: Demo): Promise<string> => ownerTokenOf(demo.credentials);

async function publish(demo: Demo, owner: string, deviceId: string, publishTo: unknown): Promise<number> {
  const r = await fetch(`${demo.url}/api/v1/devices/${deviceId}`, {
    method: 'PATCH',
    headers: { ...bearer(owner), 'content-type': 'application/json' },
    body: JSON.stringify({ publishTo }),
  });
  return r.status;
}

const wsUrl = (demo: Demo, q: string) => `${demo.url.replace(/^http/, 'ws')}/ws?${q}`;

describe('telemetry-realtime over WebSocket on the accelerated clock', () => {
  let demo: Demo;
  let partner: StreamClient;
  let gridApp: StreamClient;
  let customer: StreamClient;
  let silent: StreamClient;
  let owner: string;

  beforeAll(async () => {
    demo = await demoSite({ speed: 120, wsPingTimeoutMs: 1500, configure: (c) => (c.ws.maxEntriesPerMessage = 3) });
    const all = [...demo.daemon.site.devices.keys()];
    const [tPartner, tGrid, tCust] = await Promise.all([
      clientToken(demo, 'all-app', all),
      clientToken(demo, 'grid-app', ['grid-meter']),
      clientToken(demo, 'cust-app', []),
    ]);
    owner = await ownerToken(demo);
    partner = await StreamClient.connect(
      wsUrl(demo, 'streams=telemetry-realtime,grid-events&telemetryInclude=default,energy'),
      tPartner,
    );
    gridApp = await StreamClient.connect(wsUrl(demo, 'streams=telemetry-realtime'), tGrid);
    customer = await StreamClient.connect(wsUrl(demo, 'streams=telemetry-realtime&telemetryDevices=customer'), tCust);
    silent = await StreamClient.connect(wsUrl(demo, 'streams=grid-events'), tPartner, { silent: true });
  });
  afterAll(async () => {
    for (const c of [partner, gridApp, customer, silent]) c?.close();
    await demo?.cleanup();
  });

  const intervalsOf = (c: StreamClient) => [...new Set(c.of('telemetry-realtime').map((m) => m.interval as string))];

  it('pushes each completed bucket at its boundary, chunked, with every stream the partner may see', async () => {
    await waitFor('two pushes', () => intervalsOf(partner).length >= 2, 60_000);
    const [first, second] = intervalsOf(partner) as [string, string];
    const [s1, e1] = first.split('/').map(Date.parse) as [number, number];
    expect(e1 - s1).toBe(Q);
    expect(s1 % Q).toBe(0);
    expect(Date.parse(second.split('/')[0]!)).toBe(e1); // consecutive buckets, none skipped
    const msgs = partner.of('telemetry-realtime').filter((m) => m.interval === first);
    for (const m of msgs) {
      expect(m).toMatchObject({
        stream: 'telemetry-realtime',
        telemetryDevices: 'partner',
        telemetryInclude: ['default', 'energy'],
      });
      expect(m.entries.length).toBeGreaterThan(0);
      expect(m.entries.length).toBeLessThanOrEqual(3);
      for (const e of m.entries) {
        expect(e.interval).toBe(first);
        expect(e.kind).toBe(e.deviceKind);
      }
    }
    const seen = msgs.flatMap((m) => m.entries.map((e: { deviceId: string }) => e.deviceId)).sort();
    expect(seen).toEqual(
      demo.daemon.site
        .streams()
        .map((s) => s.id)
        .sort(),
    );
    expect(msgs.length).toBe(Math.ceil(seen.length / 3));
    const battery = msgs.flatMap((m) => m.entries).find((e: { deviceId: string }) => e.deviceId === 'inverter__bb_agg');
    expect(battery.energy_Wh_increment).toBeGreaterThanOrEqual(0);
    expect(typeof battery.soc).toBe('number');
  });

  it('a partner gets only the streams of the devices assigned to it; a customer client nothing without a grant', async () => {
    await waitFor('grid-app push', () => gridApp.of('telemetry-realtime').length > 0, 30_000);
    const ids = new Set(
      gridApp.of('telemetry-realtime').flatMap((m) => m.entries.map((e: { deviceId: string }) => e.deviceId)),
    );
    expect([...ids]).toEqual(['grid-meter__GRID_METER_DERIVED']);
    expect(customer.of('telemetry-realtime')).toEqual([]);
  });

  it('a publishTo grant takes effect from the next push, in a customer-class message of its own', async () => {
    const before = intervalsOf(partner).length;
    expect(await publish(demo, owner, 'battery-1', [{ clientId: 'cust-app', data: ['telemetry-realtime'] }])).toBe(200);
    await waitFor('the next push', () => intervalsOf(partner).length > before, 30_000);
    await waitFor('customer push', () => customer.of('telemetry-realtime').length > 0, 5_000);
    const m = customer.of('telemetry-realtime')[0];
    expect(m.telemetryDevices).toBe('customer');
    expect(m.entries.map((e: { deviceId: string }) => e.deviceId)).toEqual(['battery-1']);
    // and a revoked grant stops the pushes from the next boundary on
    expect(await publish(demo, owner, 'battery-1', [])).toBe(200);
    const count = customer.of('telemetry-realtime').length;
    const now = intervalsOf(partner).length;
    await waitFor('another push', () => intervalsOf(partner).length > now + 1, 30_000);
    expect(customer.of('telemetry-realtime').length).toBe(count);
  });

  it('closes a client that sends no ping within the timeout, and keeps those that do', async () => {
    await waitFor('silent client closed', () => silent.closed !== null, 10_000);
    expect(silent.closed!.code).toBe(1008);
    expect(partner.closed).toBeNull();
  });

  it('refuses bad query parameters and missing tokens before the upgrade', async () => {
    const token = (
      await postForm(
        demo.credentials.tokenUrl,
        { grant_type: 'client_credentials' },
        { authorization: basic(demo.credentials.client.id, demo.credentials.client.secret) },
      )
    ).body.access_token;
    const auth = { authorization: `Bearer ${token}` };
    const cases: [string, Record<string, string>, number, string][] = [
      ['', auth, 400, 'MISSING_PARAMETER'],
      ['streams=', auth, 400, 'INVALID_PARAMETER'],
      ['streams=telemetry-realtime&telemetryDevices=everyone', auth, 400, 'INVALID_PARAMETER'],
      ['streams=telemetry-realtime&telemetryInclude=volts', auth, 400, 'INVALID_PARAMETER'],
      ['streams=telemetry-realtime', {}, 401, 'UNAUTHORIZED'],
      ['streams=telemetry-realtime', { authorization: 'Bearer nope' }, 401, 'INVALID_TOKEN'],
    ];
    for (const [q, headers, status, code] of cases) {
      const r = await tryUpgrade(wsUrl(demo, q), headers);
      expect(r, q).toMatchObject({ open: false, status, body: { statusCode: status, code } });
    }
    // lenient where the spec is silent (design.md): the spec's alternate spelling, a repeated
    // list parameter and an unknown parameter all open the connection
    for (const q of [
      'streams=grid-event',
      'streams=telemetry-realtime&streams=grid-events',
      'streams=telemetry-realtime&foo=1',
      'streams=telemetry-realtime&telemetryInclude=default&telemetryInclude=energy',
    ]) {
      expect(await tryUpgrade(wsUrl(demo, q), auth), q).toEqual({ open: true });
    }
    const wrongPath = await tryUpgrade(`${demo.url.replace(/^http/, 'ws')}/stream?streams=grid-events`, auth);
    expect(wrongPath).toMatchObject({ open: false, status: 404 });
  });
});

describe('grid outage: relay opens and closes in the simulator', () => {
  let demo: Demo;
  let partner: StreamClient;
  let delegated: StreamClient;

  beforeAll(async () => {
    // an hour of history: the buckets before the outage exist to compare with
    demo = await demoSite({ speed: 120, history: 'PT1H' });
    const token = await clientToken(demo, 'grid-watch', ['grid-meter']);
    const cust = await clientToken(demo, 'cust-grid', []);
    expect(
      await publish(demo, await ownerToken(demo), 'grid-meter', [
        { clientId: 'cust-grid', data: ['telemetry-realtime'] },
      ]),
    ).toBe(200);
    partner = await StreamClient.connect(wsUrl(demo, 'streams=grid-events'), token);
    delegated = await StreamClient.connect(wsUrl(demo, 'streams=grid-events&telemetryDevices=customer'), cust);
    await waitFor('grid meter read', () => demo.daemon.site.devices.get('grid-meter')!.online);
  });
  afterAll(async () => {
    partner?.close();
    delegated?.close();
    await demo?.cleanup();
  });

  it('sends exactly one not_present and one ok event near the switch times, and telemetry agrees', async () => {
    const post = (on: boolean) =>
      fetch(`${demo.simControl.url}/grid-outage`, { method: 'POST', body: JSON.stringify({ on }) });
    // let the baseline state settle (debounce) before switching
    const settled = demo.clock.now() + 2 * 60_000;
    await waitFor('baseline', () => demo.clock.now() > settled);
    expect((await post(true)).status).toBe(200);
    const opened = demo.sim.time;
    // long enough for a whole bucket inside the outage
    await waitFor('35 simulated minutes', () => demo.clock.now() > opened + 35 * 60_000, 60_000);
    expect((await post(false)).status).toBe(200);
    const closed = demo.sim.time;
    await waitFor('two grid events', () => partner.of('grid-events').length >= 2, 30_000);
    // a little longer: no further event may follow
    const quiet = demo.clock.now() + 10 * 60_000;
    await waitFor('quiet period', () => demo.clock.now() > quiet, 30_000);

    const events = partner.of('grid-events');
    expect(events.map((e) => e.state)).toEqual(['not_present', 'ok']);
    const poll = demo.daemon.ctx.config.poll.intervalSeconds * 1000;
    for (const [e, at] of [
      [events[0], opened],
      [events[1], closed],
    ] as const) {
      expect(e).toMatchObject({ stream: 'grid-events', deviceKind: 'meter' });
      // stamped with its poll's tick: the first tick after the switch, or the one just before it
      // when that poll's request reached the simulator after the switch
      const ts = Date.parse(e.timestamp);
      expect(Math.abs(ts - at)).toBeLessThanOrEqual(poll);
    }
    // customer-delegated devices get no grid events (spec)
    expect(delegated.of('grid-events')).toEqual([]);

    // the state channel of the buckets inside the outage agrees with the events
    await waitFor(
      'buckets after the outage closed',
      () =>
        demo.daemon.ctx.bucketer.stats().bucketsWritten > 0 &&
        demo.clock.now() > Math.ceil(closed / Q) * Q + 2 * 60_000,
      30_000,
    );
    const token = (
      await postForm(
        demo.credentials.tokenUrl,
        { grant_type: 'client_credentials' },
        { authorization: basic(demo.credentials.client.id, demo.credentials.client.secret) },
      )
    ).body.access_token;
    // spec "Stream grid-events" rule 3: the event's id is found in the topology as a sensor with a
    // `state` channel, and that id's telemetry holds the state (no id parsing)
    const eventId = events[0].deviceId as string;
    expect(events[1].deviceId).toBe(eventId);
    const topo = (await (
      await fetch(`${demo.url}/api/v1/sites/${demo.daemon.site.id}/topology`, { headers: bearer(token) })
    ).json()) as { topology: TopoNode };
    const sensor = sensorsOf(topo.topology).find((n) => n.id === eventId);
    expect(sensor, `topology lists ${eventId}`).toBeDefined();
    expect(sensor!.channels!.map((c) => c.id)).toContain('state');
    const from = new Date(Math.floor(opened / Q) * Q - Q).toISOString();
    const r = await fetch(`${demo.url}/api/v1/devices/${encodeURIComponent(eventId)}/telemetry?interval=${from}/PT2H`, {
      headers: bearer(token),
    });
    const entries = ((await r.json()) as { entries: { interval: string; state: string; power_W: number }[] }).entries;
    const inside = entries.filter((e) => {
      const [s, end] = e.interval.split('/').map(Date.parse) as [number, number];
      return s >= opened + poll && end <= closed;
    });
    expect(inside.length).toBeGreaterThanOrEqual(1);
    for (const e of inside) {
      expect(e.state).toBe('not_present');
      expect(e.power_W).toBe(0);
    }
    const before = entries.filter((e) => Date.parse(e.interval.split('/')[1]!) <= opened);
    expect(before.length).toBeGreaterThan(0);
    for (const e of before) expect(e.state).toBe('ok');
  });
});
