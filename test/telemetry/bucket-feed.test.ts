/**
 * Stream changes on a data disk that refuses writes (docs/design.md "Field faults: what the
 * numbers survive"): the new streams' keys cannot be stored, so the streams in force stay, the
 * listener does not fail, and the first device poll once the disk takes writes applies them.
 * `query_only` makes every write fail with SQLITE_READONLY, a storage fault, as a read-only disk does.
 */
import { describe, expect, it } from 'vitest';
import { EventBus } from '../../src/core/events.js';
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
