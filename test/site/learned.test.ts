/**
 * What the site learns at run time (issue 27 findings 8 and 9): PV modules only grow while the
 * device stays the same (an inverter asleep at night that lists none changes nothing), a device
 * that comes back with another serial or model is another device, and the learned count is saved
 * and given back at the next start before any stream is built.
 */
import { describe, expect, it } from 'vitest';
import { EventBus } from '../../src/core/events.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { LearnedTopology, restoreLearned } from '../../src/site/learned.js';
import { identityChanged, Site } from '../../src/site/site.js';
import { openDatabase } from '../../src/store/db.js';

const EP = { host: '127.0.0.1', port: 502 };
const siteConfig = () =>
  demoSiteConfig(
    { inverter: EP, meter: EP },
    { httpHost: '127.0.0.1', httpPort: 0, dataDir: '/tmp/unused', pollSeconds: 10, batteryBlocks: 1 },
  );
const pvStreams = (site: Site) =>
  site
    .streams()
    .filter((s) => s.role === 'pv_module')
    .map((s) => s.id);

describe('learned topology', () => {
  it('PV modules only grow while the device is the same; a replaced device starts over', () => {
    const site = new Site(siteConfig());
    const id = { manufacturer: 'ACME', model: 'H6', serial: 'A1' };
    expect(site.learn('inverter', { identity: id, pvModules: 4 })).toBe(true);
    // asleep at night: the 160 model lists no modules, or fewer
    expect(site.learn('inverter', { identity: id, pvModules: 0 })).toBe(false);
    expect(site.learn('inverter', { identity: id, pvModules: 2 })).toBe(false);
    expect(pvStreams(site)).toEqual(['inverter__pv1', 'inverter__pv2', 'inverter__pv3', 'inverter__pv4']);
    // another inverter answers at the address: what it lists is what it has
    expect(site.learn('inverter', { identity: { ...id, serial: 'B2' }, pvModules: 2 })).toBe(true);
    expect(pvStreams(site)).toEqual(['inverter__pv1', 'inverter__pv2']);
  });

  it('a first identity is not a replacement; another serial or model is', () => {
    expect(identityChanged({}, { serial: 'A1' })).toBe(false);
    expect(identityChanged({ serial: 'A1', model: 'M' }, { serial: 'A1', model: 'M', version: '2' })).toBe(false);
    expect(identityChanged({ serial: 'A1', model: 'M' }, { serial: 'A2', model: 'M' })).toBe(true);
    expect(identityChanged({ serial: 'A1', model: 'M' }, { serial: 'A1', model: 'N' })).toBe(true);
  });

  it('is saved when it changes and restored at the next start, before the first poll', () => {
    const db = openDatabase(':memory:');
    const bus = new EventBus();
    const first = new Site(siteConfig());
    const feature = new LearnedTopology({ db, site: first, bus });
    feature.start();
    first.learn('inverter', { pvModules: 3 });
    bus.emit('streamsChanged', { deviceId: 'inverter' });
    feature.stop();

    const next = new Site(siteConfig());
    expect(pvStreams(next)).toEqual([]);
    restoreLearned(db, next);
    expect(pvStreams(next)).toEqual(['inverter__pv1', 'inverter__pv2', 'inverter__pv3']);
    db.close();
  });

  it('live channels only grow while the device is the same, in table order and within what the role allows; saved and restored', () => {
    const db = openDatabase(':memory:');
    const bus = new EventBus();
    const site = new Site(siteConfig());
    const feature = new LearnedTopology({ db, site, bus });
    feature.start();
    const id = { manufacturer: 'ACME', model: 'H6', serial: 'A1' };
    const live = (s: Site, stream: string) => s.stream(stream)?.live;
    expect(site.learn('inverter', { identity: id, live: { inverter: ['temperature_C', 'frequency_Hz'] } })).toBe(true);
    expect(live(site, 'inverter')).toEqual(['frequency_Hz', 'temperature_C']);
    // a poll without them (asleep at night) keeps them; a new one is added
    expect(site.learn('inverter', { identity: id, live: {} })).toBe(false);
    expect(site.learn('inverter', { identity: id, live: { inverter: ['status'] } })).toBe(true);
    expect(live(site, 'inverter')).toEqual(['frequency_Hz', 'temperature_C', 'status']);
    // the grid meter's stream may not carry a temperature (core/roles.ts): no such channel on it
    site.learn('grid-meter', { live: { 'grid-meter__GRID_METER_DERIVED': ['temperature_C', 'frequency_Hz'] } });
    expect(live(site, 'grid-meter__GRID_METER_DERIVED')).toEqual(['frequency_Hz']);
    bus.emit('streamsChanged', { deviceId: 'inverter' });
    bus.emit('streamsChanged', { deviceId: 'grid-meter' });
    feature.stop();

    const next = new Site(siteConfig());
    expect(live(next, 'inverter')).toBeUndefined();
    restoreLearned(db, next);
    expect(live(next, 'inverter')).toEqual(['frequency_Hz', 'temperature_C', 'status']);
    expect(live(next, 'grid-meter__GRID_METER_DERIVED')).toEqual(['frequency_Hz']);
    // another inverter at the address: only what it reports
    next.learn('inverter', { identity: id });
    expect(next.learn('inverter', { identity: { ...id, serial: 'B2' }, live: { inverter: ['frequency_Hz'] } })).toBe(
      true,
    );
    expect(live(next, 'inverter')).toEqual(['frequency_Hz']);
    db.close();
  });

  it('a saved list that is not JSON, or names a channel no longer in the table, restores as nothing learned', () => {
    const db = openDatabase(':memory:');
    db.prepare('INSERT INTO device_facts (device, pv_modules, live) VALUES (?, ?, ?)').run(
      'inverter',
      null,
      '{not json',
    );
    db.prepare('INSERT INTO device_facts (device, pv_modules, live) VALUES (?, ?, ?)').run(
      'grid-meter',
      null,
      JSON.stringify({ 'grid-meter__GRID_METER_DERIVED': ['frequency_Hz', 'flux_capacitance_GW', 7] }),
    );
    const site = new Site(siteConfig());
    restoreLearned(db, site);
    expect(site.stream('inverter')?.live).toBeUndefined();
    expect(site.stream('grid-meter__GRID_METER_DERIVED')?.live).toEqual(['frequency_Hz']);
    db.close();
  });
});

describe('learned topology on a data disk that refuses writes', () => {
  // query_only makes every write fail with SQLITE_READONLY, a storage fault, as a full disk's SQLITE_FULL is
  it('keeps the latest facts in memory and saves them at the first reading once writes work', () => {
    const db = openDatabase(':memory:');
    const bus = new EventBus();
    const site = new Site(siteConfig());
    const feature = new LearnedTopology({ db, site, bus });
    feature.start();
    db.pragma('query_only = ON');
    site.learn('inverter', { pvModules: 2 });
    bus.emit('streamsChanged', { deviceId: 'inverter' });
    site.learn('inverter', { pvModules: 4 });
    bus.emit('streamsChanged', { deviceId: 'inverter' });
    bus.emit('reading', { streamId: 'inverter', ts: 1, values: {} });
    // before: each refused save escaped the listener and the facts were gone
    expect(bus.listenerFailures()).toEqual([]);
    expect(feature.waitingCount).toBe(1);
    db.pragma('query_only = OFF');
    bus.emit('reading', { streamId: 'inverter', ts: 2, values: {} });
    expect(feature.waitingCount).toBe(0);
    feature.stop();

    const next = new Site(siteConfig());
    restoreLearned(db, next);
    expect(pvStreams(next)).toEqual(['inverter__pv1', 'inverter__pv2', 'inverter__pv3', 'inverter__pv4']);
    db.close();
  });
});
