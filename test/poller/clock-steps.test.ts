/**
 * The live poller on a manual clock whose wall clock steps (ManualClock.step: NTP or an operator
 * setting the time; intervals and timers untouched), with the daemon's TimeLabels: polling never
 * stops, labels never go back or before the newest stored bucket, and a clock before the build
 * labels nothing. Issue 27, finding 5: a step back of 10 minutes stopped all polling for 10
 * minutes, since what was due was the difference of two wall-clock times.
 */
import { describe, expect, it } from 'vitest';
import type { Reading } from '../../src/core/channels.js';
import { ManualClock } from '../../src/core/clock.js';
import { EventBus } from '../../src/core/events.js';
import { silentLogger } from '../../src/core/log.js';
import { type ClockStep, TimeLabels } from '../../src/core/time-labels.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { SimMemoryReader } from '../../src/demo/memory-reader.js';
import { Health } from '../../src/ops/health.js';
import { Poller } from '../../src/poller/poller.js';
import { SimSite } from '../../src/sim/site.js';
import { Site } from '../../src/site/site.js';

const T0 = Date.parse('2026-11-27T10:00:00Z');
const BUILD = Date.parse('2026-11-01T00:00:00Z');
const POLL = 10_000;

function setup(start = T0, newestStored = -Infinity) {
  const config = demoSiteConfig(
    { inverter: { host: '127.0.0.1', port: 1502 }, meter: { host: '127.0.0.1', port: 1503 } },
    { httpHost: '127.0.0.1', httpPort: 0, dataDir: '/tmp/unused', pollSeconds: POLL / 1000, batteryBlocks: 2 },
  );
  const clock = new ManualClock(start);
  const sim = new SimSite(undefined, T0);
  const bus = new EventBus();
  const site = new Site(config);
  const readings: Reading[] = [];
  let polls = 0;
  bus.on('reading', (r) => readings.push(r));
  bus.on('devicePolled', () => polls++);
  const steps: ClockStep[] = [];
  const labels = new TimeLabels({
    clock,
    notBefore: BUILD,
    newestStored: () => newestStored,
    onStep: (s) => steps.push(s),
  });
  const readers = { inverter: new SimMemoryReader(sim, 'inverter'), meter: new SimMemoryReader(sim, 'meter') };
  const poller = new Poller({
    site,
    bus,
    clock,
    log: silentLogger(),
    labels,
    readerFor: (d) => (d.role.endsWith('meter') ? readers.meter : readers.inverter),
  });
  const health = new Health({ clock, site, scheduler: poller, timeLabels: labels });
  /** one tick: the sim moves on real (monotonic) time, the poll's promises settle */
  const tick = async () => {
    sim.update(T0 + clock.mono() - start + POLL);
    clock.advance(POLL);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  };
  const stamps = () => readings.filter((r) => r.streamId === 'inverter').map((r) => r.ts);
  return { clock, poller, readings, steps, labels, health, tick, stamps, polls: () => polls };
}

describe('poller and wall-clock steps', () => {
  it('a step back of 10 minutes: every tick still polls, nothing is labelled before what was labelled', async () => {
    const { clock, poller, steps, health, tick, stamps, polls } = setup();
    poller.start();
    for (let i = 0; i < 6; i++) await tick();
    const before = stamps();
    expect(before).toHaveLength(6);
    clock.step(-600_000);
    const pollsAtStep = polls();
    await tick();
    // polled within one interval of the step (the old code polled nothing for 10 minutes)
    expect(polls()).toBeGreaterThan(pollsAtStep);
    expect(steps).toHaveLength(1);
    expect(steps[0]!.byMs).toBeCloseTo(-600_000, -3);
    expect(health.report().problems.join('\n')).toMatch(/wall clock stepped back by 600 s/);
    expect(health.report().problems.join('\n')).toMatch(/not recorded until it passes/);
    expect(health.report().status).toBe('degraded');
    expect(health.mainLoopHealthy()).toBe(true);
    // ten minutes of ticks: polled every time, no reading stamped before the last one
    for (let i = 0; i < 60; i++) {
      const n = polls();
      await tick();
      expect(polls()).toBeGreaterThan(n);
    }
    const after = stamps().slice(before.length);
    expect(after.length).toBeGreaterThan(0);
    expect(Math.min(...after)).toBeGreaterThanOrEqual(Math.max(...before));
    for (let i = 1; i < after.length; i++) expect(after[i]!).toBeGreaterThan(after[i - 1]!);
    expect(health.report().problems.join('\n')).not.toMatch(/not recorded/);
    await poller.stop();
  });

  it('a step forward of a day: the next tick is labelled in the new present; health stays healthy', async () => {
    const { clock, poller, steps, health, tick, stamps } = setup();
    poller.start();
    for (let i = 0; i < 3; i++) await tick();
    clock.step(86_400_000);
    await tick();
    expect(steps.map((s) => Math.round(s.byMs / 1000))).toEqual([86_400]);
    const last = stamps().at(-1)!;
    expect(last).toBeGreaterThanOrEqual(T0 + 86_400_000);
    expect(last - clock.now()).toBeLessThanOrEqual(0);
    expect(clock.now() - last).toBeLessThan(POLL);
    // the scheduler and polls are measured on the monotonic clock: a day forward is not a stuck loop
    expect(health.mainLoopProblems()).toEqual([]);
    await poller.stop();
  });

  it('a start in 2020 labels nothing, polls anyway, and records from the first tick after the clock is set', async () => {
    const y2020 = Date.parse('2020-01-01T00:00:00Z');
    const { clock, poller, readings, tick, stamps, polls, health } = setup(y2020);
    poller.start();
    for (let i = 0; i < 5; i++) await tick();
    expect(polls()).toBeGreaterThan(0);
    expect(readings).toEqual([]);
    expect(health.report().problems.join('\n')).toMatch(/before this build .* not recorded until it is set/);
    clock.step(T0 - y2020);
    await tick();
    expect(stamps()).toHaveLength(1);
    expect(stamps()[0]!).toBeGreaterThanOrEqual(T0);
    expect(Math.min(...readings.map((r) => r.ts))).toBeGreaterThanOrEqual(BUILD);
    // the uptime is monotonic: 6 ticks, not 6.9 years
    expect(health.report().uptimeSeconds).toBeLessThan(3600);
    await poller.stop();
  });

  it('nothing is labelled before the newest stored bucket (a clock an hour behind after a restart)', async () => {
    const stored = T0 + 3_600_000;
    const { poller, readings, tick, polls, labels } = setup(T0, stored);
    poller.start();
    for (let i = 0; i < 3; i++) await tick();
    expect(polls()).toBeGreaterThan(0);
    expect(readings).toEqual([]);
    expect(labels.unlabelled).toBe(3);
    await poller.stop();
  });
});

/**
 * A scaled clock's wall time moves in steps of `speed` ms (Date.now() is whole ms) and its timers
 * fire on libuv's own clock, which may be up to a step ahead: a tick can run before its slot and
 * run again within the same step, reading the same wall time (issue 41, finding 2: a demo at
 * --speed 60 logged "behind" with now == newest about 15 times a minute).
 */
class CoarseEarlyClock extends ManualClock {
  override now(): number {
    return Math.floor(super.now() / 60) * 60;
  }
  override setTimeout(fn: () => void, ms: number) {
    return super.setTimeout(fn, Math.max(1, ms - 50));
  }
}

describe('poller on a clock that reads in steps and fires early', () => {
  it('never refuses a label equal to the last one, and records every poll', async () => {
    const clock = new CoarseEarlyClock(T0);
    const config = demoSiteConfig(
      { inverter: { host: '127.0.0.1', port: 1502 }, meter: { host: '127.0.0.1', port: 1503 } },
      { httpHost: '127.0.0.1', httpPort: 0, dataDir: '/tmp/unused', pollSeconds: POLL / 1000, batteryBlocks: 1 },
    );
    const sim = new SimSite(undefined, T0);
    const bus = new EventBus();
    const refusals: string[] = [];
    const labels = new TimeLabels({
      clock,
      notBefore: BUILD,
      newestStored: () => -Infinity,
      onRefusal: (why, wall, floor) => refusals.push(`${why} ${wall} ${floor}`),
    });
    const stamps: number[] = [];
    bus.on('reading', (r) => {
      if (r.streamId === 'inverter') stamps.push(r.ts);
    });
    const reader = new SimMemoryReader(sim, 'inverter');
    const meter = new SimMemoryReader(sim, 'meter');
    const poller = new Poller({
      site: new Site(config),
      bus,
      clock,
      log: silentLogger(),
      labels,
      readerFor: (d) => (d.role.endsWith('meter') ? meter : reader),
    });
    poller.start();
    for (let i = 0; i < 30; i++) {
      clock.advance(POLL);
      for (let j = 0; j < 20; j++) await new Promise((r) => setImmediate(r));
    }
    await poller.stop();
    expect(refusals).toEqual([]);
    expect(labels.unlabelled).toBe(0);
    expect(stamps.length).toBeGreaterThanOrEqual(29);
  });
});

describe('health: polling makes progress', () => {
  it('fails when the scheduler ticks but no device poll finishes', async () => {
    const clock = new ManualClock(T0);
    const config = demoSiteConfig(
      { inverter: { host: '127.0.0.1', port: 1502 }, meter: { host: '127.0.0.1', port: 1503 } },
      { httpHost: '127.0.0.1', httpPort: 0, dataDir: '/tmp/unused', pollSeconds: 10, batteryBlocks: 1 },
    );
    const site = new Site(config);
    // a bus that never answers and never times out: the scheduler ticks, every device stays in flight
    const hung = { readHolding: () => new Promise<never>(() => {}), readInput: () => new Promise<never>(() => {}) };
    const poller = new Poller({ site, bus: new EventBus(), clock, log: silentLogger(), readerFor: () => hung });
    const health = new Health({ clock, site, scheduler: poller, tickSlackMs: 5_000, progressSlackMs: 5_000 });
    poller.start();
    clock.advance(30_000);
    expect(health.mainLoopProblems()).toEqual([]);
    clock.advance(10_000);
    expect(health.mainLoopProblems()).toEqual([expect.stringMatching(/no device poll has finished for 40 s/)]);
    expect(poller.overruns).toBeGreaterThan(0);
    void poller.stop(); // its cycles never end: not awaited
  });
});
