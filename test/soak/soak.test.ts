/**
 * Fault soak: the daemon in this process (as `sitegw demo` composes it) polls the simulated site
 * over real Modbus TCP on a fast clock, uplinked to an in-process aedes broker, while a schedule
 * repeats every simulated hour:
 *   min  2– 5  inverter unit silent (timeouts)          min  6– 9  battery block 1 answers exception 4
 *   min  9–11  battery block 2 resets its connection    min 11     inverter host reboots (down ~60 s)
 *   min 12–13  house meter answers exception 6          min 17–40  grid outage (relay open)
 *   min 25–28  MQTT broker stopped, then started        min 50–58  grid meter silent
 * Two simulated hours in CI (~60 s real at speed 150); SITEGW_SOAK_HOURS=48 for days.
 * Garbage frames exist on RTU only (src/sim/faults.ts) and are covered by test/e2e/rtu.test.ts.
 *
 * What must hold at the end:
 * - every device is online again;
 * - every stream has every bucket whose 15 minutes, widened by one poll either side, saw no
 *   injected Modbus fault on any host (a timeout holds the shared socket's queue, so a fault
 *   excuses the whole site's buckets it touches); the grid outage and the broker restart excuse
 *   nothing;
 * - grid events, announced and stored, are exactly [not_present, ok, unknown, ok] per hour;
 * - every uplink seq from the first to the last is delivered and every stored bucket with it;
 * - heap after a forced GC in the last hour is within +25 % or +10 MB of the first hour's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimHost } from '../../src/sim/device-images.js';
import { demoSite, waitFor } from '../support/demo.js';
import { gc } from '../support/gc.js';
import { aedesBroker, type Collector, collect, type TestBroker } from '../support/mqtt-brokers.js';
import { dedupe, deliveredOf, expectComplete, storedBuckets, uplinkTo } from '../support/uplink.js';

const HOURS = Number(process.env.SITEGW_SOAK_HOURS ?? 2);
const SPEED = Number(process.env.SITEGW_SOAK_SPEED ?? 150);
const MIN = 60_000;
const Q = 15 * MIN;
const PREFIX = 'sitegw/demo-site';

const heapAfterGc = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

type Step = { at: number; what: string; span?: 'open' | 'close'; run: () => void | Promise<void> };

describe(`fault soak: ${HOURS} simulated hours of device, grid and broker faults`, () => {
  let broker: TestBroker;
  let c: Collector;
  let demo: Awaited<ReturnType<typeof demoSite>>;

  beforeAll(async () => {
    broker = await aedesBroker();
    // a persistent session: what the gateway publishes while this consumer reconnects waits for it
    c = await collect(broker.url, `${PREFIX}/#`, { clean: false, clientId: 'soak-consumer' });
    // start on a quarter-hour so the schedule's minutes line up with buckets
    const start = Math.ceil(Date.UTC(2026, 5, 1, 6, 0, 0) / Q) * Q - 30_000;
    demo = await demoSite({ speed: SPEED, start, ...uplinkTo(broker) });
  });
  afterAll(async () => {
    await demo?.cleanup();
    await c?.close();
    await broker?.close();
  });

  it('recovers every device, keeps every unexcused bucket, the grid events, every uplink seq, and a flat heap', async () => {
    const { clock, servers, sim, daemon } = demo;
    const faults = servers.faults;
    const poll = daemon.ctx.config.poll.intervalSeconds * 1000;
    const t0 = Math.ceil(clock.now() / Q) * Q;
    const silent = (host: SimHost, unit: number) => () => faults.set(host, unit, { kind: 'silent' });
    const clear = (host: SimHost, unit: number) => () => faults.clear(host, unit);
    const steps: Step[] = [];
    for (let h = 0; h < HOURS; h++) {
      const at = (m: number) => t0 + h * 60 * MIN + m * MIN;
      steps.push(
        { at: at(2), what: 'inverter silent', span: 'open', run: silent('inverter', 1) },
        { at: at(5), what: 'inverter answers', run: clear('inverter', 1) },
        {
          at: at(6),
          what: 'battery 1 exception 4',
          run: () => faults.set('inverter', 2, { kind: 'exception', code: 4 }),
        },
        {
          at: at(9),
          what: 'battery 1 answers; battery 2 resets',
          run: () => (faults.clear('inverter', 2), faults.set('inverter', 3, { kind: 'reset' })),
        },
        {
          at: at(11),
          what: 'battery 2 answers; inverter host reboots',
          run: () => (faults.clear('inverter', 3), void servers.reboot('inverter', MIN / SPEED)),
        },
        {
          at: at(12),
          what: 'house meter exception 6',
          run: () => faults.set('meter', 2, { kind: 'exception', code: 6 }),
        },
        { at: at(13), what: 'house meter answers', span: 'close', run: clear('meter', 2) },
        { at: at(17), what: 'grid outage', run: () => sim.setGridOutage(true) },
        { at: at(25), what: 'broker stopped', run: () => broker.stop() },
        { at: at(28), what: 'broker started', run: () => broker.start() },
        { at: at(40), what: 'grid back', run: () => sim.setGridOutage(false) },
        { at: at(50), what: 'grid meter silent', span: 'open', run: silent('meter', 1) },
        { at: at(58), what: 'grid meter answers', span: 'close', run: clear('meter', 1) },
      );
    }
    const end = t0 + HOURS * 60 * MIN;
    const heaps: { first?: number; last?: number } = {};
    /** simulated spans in which some injected Modbus fault was active, as they really happened */
    const disturbed: [number, number][] = [];
    let openSince: number | null = null;
    for (const s of steps) {
      await waitFor(s.what, () => clock.now() >= s.at, (2 * 60 * MIN) / SPEED + 30_000);
      const now = clock.now();
      if (heaps.first === undefined && now >= t0 + 15 * MIN) heaps.first = heapAfterGc();
      if (now >= end - 45 * MIN && now < end - 30 * MIN) heaps.last = heapAfterGc();
      await s.run();
      if (s.span === 'open') openSince = now;
      // a queued timeout or the reboot's downtime may outlast the step by a poll or so
      if (s.span === 'close') disturbed.push([openSince!, clock.now() + MIN]);
    }
    await waitFor('the end of the run', () => clock.now() >= end + 2 * MIN, (10 * MIN) / SPEED + 30_000);
    heaps.last ??= heapAfterGc();

    const ids = [...daemon.site.devices.keys()];
    await waitFor('every device online', () => ids.every((id) => daemon.site.devices.get(id)!.online), 30_000);
    await waitFor('outbox drained', () => daemon.uplink!.health().outbox.depth === 0 || undefined, 30_000);
    const db = daemon.ctx.db;
    const stored = storedBuckets(db);
    // the last messages reach the consumer (the broker's ack to the gateway emptied the outbox)
    await deliveredOf(c, stored);
    const keys = daemon.site.streams().map((s) => s.id);
    const missing: string[] = [];
    let expected = 0;
    for (let s = t0; s + Q <= end; s += Q) {
      if (disturbed.some(([a, b]) => a < s + Q + poll && b > s - poll)) continue;
      for (const k of keys) {
        expected++;
        const key = `${k}|${new Date(s).toISOString().replace('.000Z', 'Z')}`;
        if (!stored.has(key)) missing.push(key);
      }
    }
    const events = db
      .prepare(
        "SELECT state FROM grid_events WHERE device_id = 'grid-meter' AND announced = 1 AND ts >= ? ORDER BY ts, id",
      )
      .pluck()
      .all(t0) as string[];
    const delivered = dedupe(c);
    const growth = heaps.last - heaps.first!;
    const mb = (b: number) => (b / 1048576).toFixed(1);
    console.log(
      `[soak] ${HOURS} simulated h at ${SPEED}x: ${steps.length} scheduled faults (inverter/battery/house/grid-meter timeouts, exceptions, resets, host reboots, ${HOURS} grid outages, ${HOURS} broker restarts); ` +
        `${ids.length} devices online at the end; ${expected} bucket×stream slots outside fault spans, ${missing.length} missing; grid events ${events.join(',')}; ` +
        `${delivered.length} uplink messages (seq ${delivered[0]?.seq}–${delivered.at(-1)?.seq}); heap after GC ${mb(heaps.first!)} → ${mb(heaps.last)} MB`,
    );
    expect(missing.slice(0, 10)).toEqual([]);
    expect(expected).toBeGreaterThanOrEqual(HOURS * 2 * keys.length);
    expect(events).toEqual(Array.from({ length: HOURS }, () => ['not_present', 'ok', 'unknown', 'ok']).flat());
    expectComplete(delivered, stored);
    expect(growth, `heap grew ${mb(growth)} MB`).toBeLessThanOrEqual(Math.max(heaps.first! * 0.25, 10 * 1048576));
  }, 600_000);
});
