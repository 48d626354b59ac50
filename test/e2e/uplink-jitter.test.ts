/**
 * uplink.publishJitterSeconds: a bucket close's telemetry waits this site's fixed share of the
 * window before it is published (docs/fleet-scale.md: the fleet's herd at minutes 0/15/30/45).
 * Timed on the daemon clock at the consumer, so the demo's speed does not matter.
 */

import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishDelayMs } from '../../src/uplink/jitter.js';
import { demoSite, waitFor } from '../support/demo.js';
import { aedesBroker, type TestBroker } from '../support/mqtt-brokers.js';
import { BUCKET_MS, uplinkTo } from '../support/uplink.js';

const PREFIX = 'sitegw/demo-site';
const JITTER_S = 300;

describe('uplink publish jitter', () => {
  let broker: TestBroker;
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let client: mqtt.MqttClient;
  const arrivals: { at: number; bucketEnd: number }[] = [];

  beforeAll(async () => {
    broker = await aedesBroker();
    client = await mqtt.connectAsync(broker.url);
    client.on('message', (_t, payload) => {
      // a close can come out while demoSite() is still starting (at 600x a quarter hour is 1.5 s,
      // and the demo starts at the real now, anywhere in one): its arrival has no daemon clock
      // to be timed on yet, and a throw here stalls the client's acks and with them every later message
      if (!demo) return;
      const b = JSON.parse(String(payload));
      arrivals.push({ at: demo.clock.now(), bucketEnd: Date.parse(b.time) + BUCKET_MS });
    });
    await client.subscribeAsync(`${PREFIX}/telemetry`, { qos: 1 });
    demo = await demoSite({ speed: 600, ...uplinkTo(broker, { publishJitterSeconds: JITTER_S }) });
  });
  afterAll(async () => {
    await demo?.cleanup();
    await client?.endAsync();
    await broker?.close();
  });

  it("holds each close's telemetry for the site's share of the window, derived from its id", async () => {
    const delay = publishDelayMs('demo-site', JITTER_S);
    // the demo site's share is well past the close's own grace (45 s at this speed): a message
    // published at the close would arrive far earlier than this
    expect(delay).toBeGreaterThan(120_000);
    expect(delay).toBeLessThan(JITTER_S * 1000);
    await waitFor('three live buckets published', () => arrivals.length >= 3 || undefined, 30_000);
    for (const a of arrivals) expect(a.at - a.bucketEnd, JSON.stringify(a)).toBeGreaterThanOrEqual(delay);
    expect(demo.daemon.uplink!.health().dropped).toMatchObject({ byAge: 0, bySize: 0 });
  });

  it('spreads sites over the window by id, the same delay every time', () => {
    const delays = Array.from({ length: 1000 }, (_, i) => publishDelayMs(`site-${i}`, 10));
    expect(publishDelayMs('site-7', 10)).toBe(delays[7]);
    // ten 1-second slots, each with roughly a tenth of the sites
    const slots = Array.from({ length: 10 }, (_, s) => delays.filter((d) => Math.floor(d / 1000) === s).length);
    for (const n of slots) expect(n).toBeGreaterThan(60);
    expect(publishDelayMs('site-7', 0)).toBe(0);
  });
});
