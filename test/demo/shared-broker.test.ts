/**
 * `sitegw demo --site-id`: two demos on one mosquitto are two sites (their own client ids and
 * topic prefixes), and neither takes the other's connection over; a fast demo restarted on its
 * data directory continues its simulated time where its stored buckets end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newestBucketEnd } from '../../src/store/buckets.js';
import { demoSite, waitFor } from '../support/demo.js';
import * as brokers from '../support/mqtt-brokers.js';
import { uplinkTo } from '../support/uplink.js';

brokers.noteMosquittoSkipped('test/demo/shared-broker.test.ts');

describe.skipIf(!brokers.MOSQUITTO)('demos sharing a broker', () => {
  let broker: brokers.TestBroker;
  let wire: brokers.Collector;
  let dir: string;

  beforeAll(async () => {
    broker = await brokers.mosquittoBroker();
    wire = await brokers.collect(broker.url, 'sitegw/+/telemetry');
    dir = mkdtempSync(join(tmpdir(), 'sitegw-demos-'));
  });
  afterAll(async () => {
    await wire?.close();
    await broker?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs two demos with different --site-id side by side: both publish, neither is disconnected', async () => {
    const start = (siteId: string) => demoSite({ speed: 600, siteId, dataDir: join(dir, siteId), ...uplinkTo(broker) });
    const [north, south] = await Promise.all([start('north'), start('south')]);
    try {
      const link = (d: Awaited<ReturnType<typeof start>>) => d.daemon.uplink!.health();
      await waitFor('both connected', () => link(north).connected && link(south).connected);
      const since = [link(north).connectedSince, link(south).connectedSince];
      const telemetry = (site: string) => wire.json('telemetry').filter((m) => m.siteId === site).length;
      // three bucket closes each
      await waitFor('telemetry of both sites', () => telemetry('north') >= 3 && telemetry('south') >= 3, 60_000);
      expect([link(north).connectedSince, link(south).connectedSince]).toEqual(since);
      expect([link(north).lastError, link(south).lastError]).toEqual([null, null]);
      expect(north.daemon.ctx.config.uplink?.clientId).toBe('sitegw-north');
      expect(new Set(wire.messages.map((m) => m.topic))).toEqual(
        new Set(['sitegw/north/telemetry', 'sitegw/south/telemetry']),
      );
    } finally {
      await north.cleanup();
      await south.cleanup();
    }
  });

  it('continues a fast demo’s simulated time from its stored buckets after a restart', async () => {
    const dataDir = join(dir, 'again');
    // a first run whose simulated time went two days ahead of the real one
    const first = await demoSite({ speed: 600, siteId: 'again', dataDir, start: Date.now() + 2 * 86_400_000 });
    await waitFor('a stored bucket', () => newestBucketEnd(join(dataDir, 'sitegw.db')) !== null, 60_000);
    await first.cleanup();
    const end = newestBucketEnd(join(dataDir, 'sitegw.db'))!;
    const second = await demoSite({ speed: 600, siteId: 'again', dataDir });
    try {
      expect(end).toBeGreaterThan(Date.now() + 86_400_000);
      expect(second.clock.now()).toBeGreaterThanOrEqual(end);
    } finally {
      await second.cleanup();
    }
  });
});
