/**
 * Stream changes on a data disk that refuses writes (docs/design.md "Field faults: what the
 * numbers survive"): the new streams' keys cannot be stored, so the streams in force stay, the
 * listener does not fail, and the first device poll once the disk takes writes applies them.
 * `query_only` makes every write fail with SQLITE_READONLY, a storage fault, as a read-only disk does.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { EventBus } from '../../src/core/events.js';
import { TimeLabels } from '../../src/core/time-labels.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { Site } from '../../src/site/site.js';
import { openDatabase } from '../../src/store/db.js';
import { findStreamKey } from '../../src/store/streams.js';
import { Bucketer } from '../../src/telemetry/bucketer.js';
import { BucketFeed } from '../../src/telemetry/feature.js';

const EP = { host: '127.0.0.1', port: 502 };

describe('the bucketer feed on a disk that refuses writes', () => {
  it('keeps the streams in force and applies the new ones after the first poll that can store them', () => {
    const site = new Site(
      demoSiteConfig(
        { inverter: EP, meter: EP },
        { httpHost: '127.0.0.1', httpPort: 0, dataDir: '/tmp/unused', pollSeconds: 10, batteryBlocks: 1 },
      ),
    );
    const db = openDatabase(':memory:');
    const bus = new EventBus();
    const bucketer = new Bucketer({ db, streams: site.streams(), pollPeriodMs: 10_000, bus });
    bucketer.start();
    const feed = new BucketFeed({ bus, bucketer, site });
    feed.start();

    db.pragma('query_only = ON');
    site.learn('inverter', { pvModules: 2 });
    bus.emit('streamsChanged', { deviceId: 'inverter' });
    bus.emit('devicePolled', { deviceId: 'inverter', ms: 5, ok: true });
    // before: the refused keys escaped the listener and the new streams waited for the next change
    expect(bus.listenerFailures()).toEqual([]);
    expect(findStreamKey(db, 'inverter__pv2')).toBeUndefined();

    db.pragma('query_only = OFF');
    bus.emit('devicePolled', { deviceId: 'inverter', ms: 5, ok: true });
    expect(findStreamKey(db, 'inverter__pv2')).toBeDefined();
    feed.stop();
    db.close();
  });
});

// issue 41, finding 1: what a forward step labelled waits outside every bucket until it is
// confirmed (bucketed in the new time) or undone (dropped); buckets close on the kept line
describe('the bucketer feed and a forward clock step', () => {
  const T0 = Date.parse('2026-12-01T10:01:00Z');
  const DAY = 86_400_000;
  function setup() {
    const site = new Site(
      demoSiteConfig(
        { inverter: EP, meter: EP },
        { httpHost: '127.0.0.1', httpPort: 0, dataDir: '/tmp/unused', pollSeconds: 10, batteryBlocks: 1 },
      ),
    );
    const db = openDatabase(':memory:');
    const bus = new EventBus();
    const bucketer = new Bucketer({ db, streams: site.streams(), pollPeriodMs: 10_000, bus });
    bucketer.start();
    const clock = new ManualClock(T0);
    let feed: BucketFeed | undefined;
    const labels = new TimeLabels({
      clock,
      notBefore: 0,
      newestStored: () => bucketer.newestClosed,
      onHeld: (o) => feed?.settle(o),
    });
    feed = new BucketFeed({ bus, bucketer, site, labels });
    feed.start();
    const closed: number[] = [];
    bus.on('bucketsClosed', (b) => closed.push(b.start));
    /** one poll's reading of the inverter, labelled by the rules */
    const poll = () => {
      clock.advance(10_000);
      const l = labels.label(clock.now());
      if (l.ok) bus.emit('reading', { streamId: 'inverter', ts: l.at, values: { power_W: -1000 } });
    };
    const close = () => bucketer.closeUntil(labels.closingNow());
    return { clock, labels, feed: feed!, bucketer, closed, poll, close };
  }

  it('undone: the held readings are dropped, nothing of the stepped-to day is closed, and the next poll is bucketed', () => {
    const { clock, feed, closed, poll, close } = setup();
    for (let i = 0; i < 3; i++) poll();
    clock.step(DAY);
    for (let i = 0; i < 6; i++) poll();
    close();
    expect(closed).toEqual([]);
    clock.step(-DAY);
    poll();
    expect(feed.heldDropped).toBe(6);
    for (let i = 0; i < 90; i++) poll();
    close();
    // the quarter hours of the true time, and nothing of the next day
    expect(closed.length).toBeGreaterThan(0);
    expect(closed.every((t) => t < T0 + DAY / 2)).toBe(true);
  });

  it('confirmed: the held readings are bucketed in the new time', () => {
    const { clock, feed, closed, poll, close } = setup();
    poll();
    clock.step(DAY);
    // 10 minutes of polls: confirmed at the last, then a quarter hour on
    for (let i = 0; i < 60 + 90; i++) poll();
    close();
    expect(feed.heldDropped).toBe(0);
    expect(closed.some((t) => t >= T0 + DAY - 900_000)).toBe(true);
  });
});
