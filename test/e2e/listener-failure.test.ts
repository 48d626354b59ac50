/**
 * A feature whose `reading` listener throws, on the demo daemon's real poll path (simulator over
 * Modbus TCP, poller, bus, bucketer, WebSocket): every stream's readings still reach the bucketer
 * and the WebSocket, and the failure is logged with its event and feature and counted in /metrics.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { bearer, clientToken } from '../support/auth.js';
import { demoSite, waitFor } from '../support/demo.js';
import { StreamClient } from '../support/ws-client.js';

type Demo = Awaited<ReturnType<typeof demoSite>>;

describe('a feature whose reading listener throws', () => {
  let demo: Demo | undefined;
  let client: StreamClient | undefined;
  afterAll(async () => {
    client?.close();
    await demo?.cleanup();
  });

  it('leaves the bucketer and the WebSocket every stream of a bucket; logged and counted', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    demo = await demoSite({ speed: 120, log: pino({ level: 'error' }, sink) });
    const { bus, clock, db, site } = demo.daemon.ctx;
    const token = await clientToken(demo, 'all-app', [...site.devices.keys()]);
    // before any failure, every registered listener's series is there at 0 (issue 44 item 7)
    const clean = await (await fetch(`${demo.url}/metrics`, { headers: bearer(token) })).text();
    for (const feature of ['bucketer feed', 'grid'])
      expect(clean).toMatch(
        new RegExp(`^sitegw_event_listener_failures_total\\{event="reading",feature="${feature}"\\} 0$`, 'm'),
      );
    let thrown = 0;
    bus.as('faulty').on('reading', () => {
      thrown++;
      throw new Error('faulty feature');
    });
    const from = clock.now();
    client = await StreamClient.connect(`${demo.url.replace(/^http/, 'ws')}/ws?streams=telemetry-realtime`, token);
    const ws = client;

    // a bucket that began after the listener came: each of its readings met the throwing listener
    const interval = await waitFor(
      'a bucket begun after the faulty listener',
      () =>
        ws
          .of('telemetry-realtime')
          .map((m) => m.interval as string)
          .find((i) => Date.parse(i.split('/')[0] ?? '') >= from),
      60_000,
    );
    const streams = site
      .streams()
      .map((s) => s.id)
      .sort();
    const pushed = ws
      .of('telemetry-realtime')
      .filter((m) => m.interval === interval)
      .flatMap((m) => m.entries.map((e: { deviceId: string }) => e.deviceId))
      .sort();
    expect(pushed).toEqual(streams);
    const start = Date.parse(interval.split('/')[0] ?? '') / 1000;
    const stored = db.prepare('SELECT COUNT(*) FROM buckets_all WHERE start_s = ?').pluck().get(start);
    expect(stored).toBe(streams.length);
    expect(thrown).toBeGreaterThanOrEqual(streams.length);

    const counted = thrown;
    const metrics = await (await fetch(`${demo.url}/metrics`, { headers: bearer(token) })).text();
    const m = /^sitegw_event_listener_failures_total\{event="reading",feature="faulty"\} (\d+)$/m.exec(metrics);
    expect(Number(m?.[1])).toBeGreaterThanOrEqual(counted);
    const logged = lines.map((l) => JSON.parse(l) as { event?: string; feature?: string; err?: { message: string } });
    expect(logged.filter((l) => l.event === 'reading')).toEqual([
      expect.objectContaining({ feature: 'faulty', err: expect.objectContaining({ message: 'faulty feature' }) }),
    ]);
  });
});
