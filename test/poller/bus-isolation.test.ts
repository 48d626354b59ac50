/**
 * A device on another bus is never slowed by a silent one: the poller on a manual clock, the
 * buses real (BusRegistry over the simulator's TCP servers). Counted in polls and requests.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Reading } from '../../src/core/channels.js';
import { ManualClock } from '../../src/core/clock.js';
import { EventBus } from '../../src/core/events.js';
import { silentLogger } from '../../src/core/log.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { BusRegistry } from '../../src/modbus/buses.js';
import { Poller } from '../../src/poller/poller.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { Site } from '../../src/site/site.js';
import { waitFor } from '../support/demo.js';

const T0 = Date.parse('2026-06-21T10:00:00Z');

describe('poller across buses', () => {
  let servers: SimServers | undefined;
  let poller: Poller | undefined;
  const buses = new BusRegistry();
  afterEach(async () => {
    servers?.faults.clear();
    await poller?.stop();
    await buses.close();
    await servers?.close();
  });

  it('keeps polling the inverter bus on every tick while both meters on the other bus are silent', async () => {
    const clock = new ManualClock(T0);
    const sim = new SimSite(undefined, T0);
    servers = await startSimServers(sim, clock);
    const config = demoSiteConfig(servers, {
      httpHost: '127.0.0.1',
      httpPort: 0,
      dataDir: '/tmp/unused',
      pollSeconds: 10,
      batteryBlocks: 2,
    });
    for (const d of config.devices) if (d.role.endsWith('meter')) d.connection.timeoutMs = 3000;
    servers.faults.set('meter', 1, { kind: 'silent' });
    servers.faults.set('meter', 2, { kind: 'silent' });
    const site = new Site(config);
    const bus = new EventBus();
    const readings: Reading[] = [];
    bus.on('reading', (r) => readings.push(r));
    poller = new Poller({ site, bus, clock, log: silentLogger(), readerFor: (d) => buses.readerFor(d) });
    poller.start();
    const inverterPolls = () => readings.filter((r) => r.streamId === 'inverter').length;
    const TICKS = 4;
    for (let k = 1; k <= TICKS; k++) {
      clock.advance(10_000);
      await waitFor(`inverter poll ${k}`, () => inverterPolls() === k);
    }
    // the grid meter got its first request and no answer yet (3 s to go); the house meter's first
    // request waits behind it on their shared bus; the meters' later polls were skipped
    expect(servers.faults.requests('meter', 1)).toBe(1);
    expect(servers.faults.requests('meter', 2)).toBe(0);
    expect(poller.overruns).toBe(2 * (TICKS - 1));
    // the batteries on the inverter's bus and their aggregate came with every tick too
    expect(readings.filter((r) => r.streamId === 'inverter__bb_agg')).toHaveLength(TICKS);
    expect(site.devices.get('inverter')!.online).toBe(true);
  });
});
