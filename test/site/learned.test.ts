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
});
