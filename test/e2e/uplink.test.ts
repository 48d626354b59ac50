/**
 * The MQTT uplink end to end: the demo site's gateway publishing to a real broker, once an
 * in-process aedes (MQTT 3.1.1) and once mosquitto started from its binary (MQTT 5), with a
 * consumer on the other side checking what it gets the way a cloud service would.
 */

import type mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketRange } from '../../src/store/buckets.js';
import { findStreamKey } from '../../src/store/streams.js';
import { expectConforming, loadContract } from '../support/contract.js';
import { demoSite, waitFor } from '../support/demo.js';
import {
  aedesBroker,
  type Collector,
  collect,
  MOSQUITTO,
  mosquittoBroker,
  noteMosquittoSkipped,
  type TestBroker,
} from '../support/mqtt-brokers.js';
import {
  BUCKET_MS,
  capturingLogger,
  dedupe,
  expectDelivered,
  storedBuckets,
  telemetryKeys,
  uplinkTo,
} from '../support/uplink.js';

noteMosquittoSkipped('test/e2e/uplink.test.ts');

const PREFIX = 'sitegw/demo-site';
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
type Demo = Awaited<ReturnType<typeof demoSite>>;

const BROKERS: {
  name: string;
  make: (o?: { users?: Record<string, string> }) => Promise<TestBroker>;
  skip: boolean;
}[] = [
  { name: 'aedes (in process, MQTT 3.1.1)', make: aedesBroker, skip: false },
  { name: 'mosquitto (MQTT 5)', make: mosquittoBroker, skip: !MOSQUITTO },
];

/**
 * A second client that connects now and reads the retained messages below `filter`, once it has
 * one on each of `topics` (or after 5 s: the checks that follow say what is missing). It waited
 * 200 ms after the first one, which a loaded machine can outlast.
 */
async function retained(broker: TestBroker, filter: string, topics: string[]): Promise<Map<string, any>> {
  const c = await collect(broker.url, filter);
  const held = () => new Map(c.messages.filter((m) => m.retain).map((m) => [m.topic, JSON.parse(m.payload)]));
  await waitFor(`retained ${topics.join(', ')}`, () => topics.every((t) => held().has(t)) || undefined, 5000).catch(
    () => undefined,
  );
  await c.close();
  return held();
}

async function request(
  c: Collector,
  payload: string | Buffer,
  props?: mqtt.IClientPublishOptions['properties'],
): Promise<any> {
  const before = c.messages.filter((m) => m.topic.endsWith('/response')).length;
  await c.client.publishAsync(`${PREFIX}/cmd/resync`, payload, { qos: 1, ...(props ? { properties: props } : {}) });
  return waitFor('resync response', () => {
    const r = c.messages.filter((m) => m.topic.endsWith('/response'));
    return r.length > before ? JSON.parse(r.at(-1)!.payload) : undefined;
  });
}

describe.each(BROKERS)('uplink to $name', ({ make, skip }) => {
  describe.skipIf(skip)('normal flow, retained state, resync', () => {
    let broker: TestBroker;
    let demo: Demo;
    let c: Collector;
    beforeAll(async () => {
      broker = await make();
      c = await collect(broker.url, `${PREFIX}/#`);
      demo = await demoSite({ speed: 600, history: 'PT2H', ...uplinkTo(broker) });
    });
    afterAll(async () => {
      await demo?.cleanup();
      await c?.close();
      await broker?.close();
    });

    it('delivers every stored bucket in the telemetry-realtime shape, with seq and time, and the outbox drains', async () => {
      const stored = storedBuckets(demo.daemon.ctx.db);
      expect(stored.size).toBeGreaterThan(8 * 6);
      await waitFor('outbox drained', () => demo.daemon.uplink!.health().outbox.depth === 0 || undefined);
      const d = await expectDelivered(c, stored);
      const tele = d.filter((m) => m.topic === `${PREFIX}/telemetry`);
      expect(tele.length).toBeGreaterThanOrEqual(8);
      const streams = demo.daemon.site.streams().map((s) => s.id);
      for (const m of tele) {
        const b = m.body;
        expect(b).toMatchObject({
          v: 2,
          siteId: 'demo-site',
          stream: 'telemetry-realtime',
          telemetryDevices: 'partner',
          telemetryInclude: ['default', 'energy'],
        });
        expect(b.interval).toBe(`${b.time}/${iso(Date.parse(b.time) + BUCKET_MS)}`);
        for (const e of b.entries) {
          expect(streams).toContain(e.deviceId);
          expect(e.interval).toBe(b.interval);
          expect(typeof e.deviceKind).toBe('string');
          if (e.soc !== undefined) expect(e.soc).toBeGreaterThan(1);
        }
      }
      // the values are the stored ones
      const db = demo.daemon.ctx.db;
      const grid = streams.find((s) => s.endsWith('__GRID_METER_DERIVED'))!;
      const rows = bucketRange(db, findStreamKey(db, grid)!, 0, 4e9);
      const sent = new Map<string, any>(
        tele.flatMap((m) =>
          m.body.entries.filter((e: any) => e.deviceId === grid).map((e: any) => [e.interval.split('/')[0], e]),
        ),
      );
      for (const r of rows) {
        const e = sent.get(iso(r[0] * 1000));
        if (!e) continue;
        expect(e.power_W).toBe(r[2]);
        expect(e.energy_Wh_increment).toBe(r[7]);
        expect(e.state).toBe(r[9]);
      }
      expect(rows.length).toBeGreaterThanOrEqual(8);
    });

    it('keeps status (online), topology and each device availability retained for a client that comes later', async () => {
      const devices = ['inverter', 'battery-1', 'battery-2', 'grid-meter', 'house-meter'];
      const r = await retained(broker, `${PREFIX}/#`, [
        `${PREFIX}/status`,
        `${PREFIX}/topology`,
        ...devices.map((dev) => `${PREFIX}/devices/${dev}/availability`),
      ]);
      const status = r.get(`${PREFIX}/status`);
      expect(status).toMatchObject({ v: 2, state: 'online', siteId: 'demo-site', devices: 5, devicesOnline: 5 });
      expect(typeof status.version).toBe('string');
      expect(status.uptimeSeconds).toBeGreaterThanOrEqual(0);
      expect(status.dropped).toEqual({ byAge: 0, bySize: 0 });
      const topo = r.get(`${PREFIX}/topology`);
      expect(topo.topology.id).toBe('demo-site');
      expect(typeof topo.seq).toBe('number');
      const sensors = JSON.stringify([topo.topology, topo.expandedTopology]);
      for (const s of demo.daemon.site.streams()) expect(sensors).toContain(`"id":"${s.id}"`);
      for (const dev of devices) {
        expect(r.get(`${PREFIX}/devices/${dev}/availability`), dev).toMatchObject({
          v: 2,
          deviceId: dev,
          online: true,
        });
      }
      // only present state is retained: telemetry is not
      expect(r.has(`${PREFIX}/telemetry`)).toBe(false);
    });

    it('answers a resync with the stored buckets of the range, marked with the request id', async () => {
      const end = Math.floor(demo.prefilledUntil / BUCKET_MS) * BUCKET_MS - BUCKET_MS;
      const start = end - HOUR;
      const res = await request(c, JSON.stringify({ requestId: 'r-1', interval: `${iso(start)}/${iso(end)}` }));
      const stored = [...storedBuckets(demo.daemon.ctx.db)].filter((k) => {
        const t = Date.parse(k.split('|')[1]!);
        return t >= start && t < end;
      });
      expect(res).toMatchObject({ v: 2, requestId: 'r-1', status: 'accepted', buckets: stored.length, messages: 4 });
      expect(res.lastSeq - res.firstSeq).toBe(3);
      const again = await waitFor('resync messages', () => {
        const m = dedupe(c).filter((x) => x.body.resync === 'r-1');
        return m.length === 4 ? m : undefined;
      });
      expect(again.map((m) => m.seq)).toEqual([res.firstSeq, res.firstSeq + 1, res.firstSeq + 2, res.firstSeq + 3]);
      const originals = new Map(
        dedupe(c)
          .filter((m) => m.topic.endsWith('/telemetry') && m.body.resync === undefined)
          .map((m) => [m.body.interval, m.body.entries]),
      );
      // the same entries (their order within a message carries no meaning, spec rule 4)
      const sorted = (e: { deviceId: string }[]) => [...e].sort((a, b) => a.deviceId.localeCompare(b.deviceId));
      for (const m of again)
        expect(sorted(m.body.entries), m.body.interval).toEqual(sorted(originals.get(m.body.interval)));
      expect(
        new Set(again.flatMap((m) => m.body.entries.map((e: any) => `${e.deviceId}|${e.interval.split('/')[0]}`))),
      ).toEqual(new Set(stored));
    });

    it('answers malformed resync commands with an error and keeps running', async () => {
      expect(await request(c, 'not json')).toMatchObject({ status: 'error', code: 'INVALID_PAYLOAD', requestId: null });
      expect(await request(c, Buffer.from([0xff, 0x00, 0x7b]))).toMatchObject({
        status: 'error',
        code: 'INVALID_PAYLOAD',
      });
      expect(await request(c, '[1,2]')).toMatchObject({ status: 'error', code: 'INVALID_PAYLOAD' });
      expect(await request(c, JSON.stringify({ interval: '2026-01-01T00:00:00Z/2026-01-02T00:00:00Z' }))).toMatchObject(
        { status: 'error', code: 'INVALID_REQUEST_ID' },
      );
      expect(await request(c, JSON.stringify({ requestId: 'r-2', interval: 'yesterday' }))).toMatchObject({
        status: 'error',
        code: 'INVALID_INTERVAL',
        requestId: 'r-2',
      });
      expect(
        await request(c, JSON.stringify({ requestId: 'r-3', interval: '2026-01-01T00:00:00Z/2026-03-01T00:00:00Z' })),
      ).toMatchObject({ status: 'error', code: 'INTERVAL_TOO_LONG', requestId: 'r-3' });
      expect(
        await request(
          c,
          JSON.stringify({ requestId: 'r-4', interval: '2026-01-01T00:00:00Z/2026-01-02T00:00:00Z', extra: 1 }),
        ),
      ).toMatchObject({ status: 'error', code: 'INVALID_PAYLOAD', requestId: 'r-4' });
      expect(await request(c, 'x'.repeat(5000))).toMatchObject({ status: 'error', code: 'INVALID_PAYLOAD' });
      expect(demo.daemon.uplink!.health().connected).toBe(true);
      const ok = await request(
        c,
        JSON.stringify({ requestId: 'r-5', interval: '2020-01-01T00:00:00Z/2020-01-02T00:00:00Z' }),
      );
      expect(ok).toMatchObject({ status: 'accepted', requestId: 'r-5', buckets: 0, messages: 0 });
    });

    it('sent only messages that conform to docs/asyncapi.yaml (every topic, the resync answers too)', () => {
      expect(expectConforming(c, PREFIX)).toBeGreaterThan(20);
      const topics = new Set(
        c.messages.map((m) => m.topic.slice(PREFIX.length + 1).replace(/^devices\/[^/]+/, 'devices/+')),
      );
      for (const t of ['telemetry', 'topology', 'status', 'devices/+/availability', 'cmd/resync/response'])
        expect(topics).toContain(t);
    });
  });

  describe.skipIf(skip)('broker down for two simulated hours', () => {
    let broker: TestBroker;
    let demo: Demo;
    let c: Collector;
    beforeAll(async () => {
      broker = await make();
      // a persistent session: the consumer gets what was published while it reconnected
      c = await collect(broker.url, `${PREFIX}/#`, { clean: false, clientId: `consumer-${broker.port}` });
      demo = await demoSite({ speed: 600, history: 'PT30M', ...uplinkTo(broker) });
    });
    afterAll(async () => {
      await demo?.cleanup();
      await c?.close();
      await broker?.close();
    });

    it('keeps every bucket in the outbox and delivers all of them, in order, once the broker is back', async () => {
      const up = demo.daemon.uplink!;
      await waitFor(
        'a live bucket delivered',
        () => (telemetryKeys(dedupe(c)).length > 0 && up.health().outbox.depth === 0) || undefined,
      );
      await broker.stop();
      const downAt = demo.clock.now();
      await waitFor(
        'two simulated hours without the broker',
        () => (demo.clock.now() > downAt + 2 * HOUR ? true : undefined),
        30_000,
      );
      const h = up.health();
      expect(h.connected).toBe(false);
      expect(h.outbox.depth).toBeGreaterThanOrEqual(7);
      expect(h.outbox.oldestUndeliveredAgeSeconds).toBeGreaterThan(5400);
      expect(h.lastError?.code).toMatch(/CONNECTION_REFUSED|CONNECTION_LOST/);
      await broker.start();
      await waitFor('outbox drained after the outage', () => up.health().outbox.depth === 0 || undefined, 30_000);
      await expectDelivered(c, storedBuckets(demo.daemon.ctx.db));
      expect(up.health()).toMatchObject({ connected: true, lastError: null, dropped: { byAge: 0, bySize: 0 } });
    });

    it('sent only messages that conform to docs/asyncapi.yaml, the replayed backlog too', () => {
      expectConforming(c, PREFIX);
    });
  });

  describe.skipIf(skip)('broker refusing the credentials', () => {
    let broker: TestBroker;
    let demo: Demo;
    const captured = capturingLogger();
    beforeAll(async () => {
      broker = await make({ users: { 'site-gw': 'right-password' } });
      demo = await demoSite({
        speed: 600,
        log: captured.log,
        ...uplinkTo(broker, { username: 'site-gw', password: 'wrong-password' }),
      });
    });
    afterAll(async () => {
      await demo?.cleanup();
      await broker?.close();
    });

    it('says so in health and once in the log, and keeps the data in the outbox', async () => {
      const up = demo.daemon.uplink!;
      const h = await waitFor('auth refusal in health', () =>
        up.health().lastError?.code === 'AUTH_REFUSED' ? up.health() : undefined,
      );
      expect(h.connected).toBe(false);
      expect(h.lastError!.message).toMatch(
        /refused the (user name or password|login \(not authorized\)): check uplink.username and uplink.password/,
      );
      await waitFor('a bucket waiting in the outbox', () => up.health().outbox.depth > 0 || undefined);
      await new Promise((r) => setTimeout(r, 2500));
      const lines = captured.lines().filter((l) => l.code === 'AUTH_REFUSED');
      // retries do not repeat the same line
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 40, feature: 'uplink', code: 'AUTH_REFUSED' });
      expect(JSON.stringify(captured.lines())).not.toContain('wrong-password');
    });
  });
});

describe.skipIf(!MOSQUITTO)('uplink over MQTT 5 (mosquitto)', () => {
  let broker: TestBroker;
  let demo: Demo;
  let c: Collector;
  beforeAll(async () => {
    broker = await mosquittoBroker();
    c = await collect(broker.url, `${PREFIX}/#`, { protocolVersion: 5 });
    await c.client.subscribeAsync('replies/#', { qos: 1 });
    demo = await demoSite({ speed: 600, history: 'PT1H', ...uplinkTo(broker) });
  });
  afterAll(async () => {
    await demo?.cleanup();
    await c?.close();
    await broker?.close();
  });

  it("answers a resync on the request's response topic with its correlation data", async () => {
    const got = new Promise<{ topic: string; body: any; correlation?: string }>((resolve) => {
      c.client.on('message', (topic, payload, packet) => {
        if (topic === 'replies/abc')
          resolve({
            topic,
            body: JSON.parse(String(payload)),
            correlation: packet.properties?.correlationData?.toString(),
          });
      });
    });
    await c.client.publishAsync(`${PREFIX}/cmd/resync`, JSON.stringify({ requestId: 'q', interval: 'nonsense' }), {
      qos: 1,
      properties: { responseTopic: 'replies/abc', correlationData: Buffer.from('corr-7') },
    });
    const r = await got;
    expect(r.body).toMatchObject({ status: 'error', code: 'INVALID_INTERVAL', requestId: 'q' });
    expect(r.correlation).toBe('corr-7');
  });

  it('sent only messages that conform to docs/asyncapi.yaml (the answer on its response topic too)', () => {
    const answer = c.messages.find((m) => m.topic === 'replies/abc')!;
    expect(loadContract(PREFIX).check(`${PREFIX}/cmd/resync/response`, JSON.parse(answer.payload))).toEqual([]);
    expectConforming(c, PREFIX);
  });
});

describe('uplink: a message the broker never acknowledged', () => {
  let broker: TestBroker;
  let demo: Demo;
  let c: Collector;
  let swallow = true;
  beforeAll(async () => {
    broker = await aedesBroker({ accept: (topic) => !(swallow && topic === `${PREFIX}/telemetry`) });
    c = await collect(broker.url, `${PREFIX}/#`, { clean: false, clientId: 'swallow-consumer' });
    demo = await demoSite({ speed: 600, history: 'PT2H', ...uplinkTo(broker) });
  });
  afterAll(async () => {
    await demo?.cleanup();
    await c?.close();
    await broker?.close();
  });

  it('stays in the outbox and goes again on the next connection', async () => {
    const up = demo.daemon.uplink!;
    await waitFor(
      'telemetry in flight without PUBACK',
      () => (up.health().outbox.inFlight > 0 && up.health().outbox.depth >= 8) || undefined,
    );
    expect(telemetryKeys(dedupe(c))).toEqual([]);
    swallow = false;
    // the connection breaks with the messages unacknowledged
    await broker.stop();
    await broker.start();
    await waitFor(
      'outbox drained',
      () => (up.health().connected && up.health().outbox.depth === 0) || undefined,
      20_000,
    );
    await expectDelivered(c, storedBuckets(demo.daemon.ctx.db));
  });
});
