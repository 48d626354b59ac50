import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Reading } from '../../src/core/channels.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { partnerToken } from '../support/auth.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';

describe('devices that vanish from the network and come back', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let token: string;
  let revived: SimServers | undefined;
  const readings: Reading[] = [];

  beforeAll(async () => {
    demo = await demoSite({ speed: 60 });
    token = await partnerToken(demo.credentials);
    demo.daemon.ctx.bus.on('reading', (r) => readings.push(r));
    await waitFor('all devices online', () => [...demo.daemon.site.devices.values()].every((d) => d.online));
  });
  afterAll(async () => {
    await demo?.cleanup();
    await revived?.close();
  });

  it('go offline with a named error and an unknown grid state, then recover on the same ports', async () => {
    const ports = { inverterPort: demo.servers.inverter.port, meterPort: demo.servers.meter.port };
    await demo.servers.close(); // both hosts drop every connection and stop listening
    await waitFor('devices offline', () => [...demo.daemon.site.devices.values()].every((d) => !d.online));
    const gm = demo.daemon.site.devices.get('grid-meter')!;
    expect(gm.errors.connection + gm.errors.timeout).toBeGreaterThan(0);
    expect(gm.lastError).toMatch(/connection|timeout/);
    await waitFor(
      'grid state unknown',
      () => readings.filter((r) => r.streamId === 'grid-meter__GRID_METER_DERIVED').at(-1)?.values.state === 'unknown',
    );
    const devices = await getJson(`${demo.url}/api/v1/devices`, token);
    expect(devices.body.devices.every((d: { online: boolean }) => !d.online)).toBe(true);

    revived = await startSimServers(demo.sim, demo.clock, ports);
    const since = readings.length;
    await waitFor('devices back online', () => [...demo.daemon.site.devices.values()].every((d) => d.online), 30_000);
    await waitFor('grid state ok again', () =>
      readings.slice(since).some((r) => r.streamId === 'grid-meter__GRID_METER_DERIVED' && r.values.state === 'ok'),
    );
    // no stale value was presented as new while the meter was silent: every reading in the
    // outage carried the state only
    const outage = readings.filter(
      (r) => r.streamId === 'grid-meter__GRID_METER_DERIVED' && r.values.state === 'unknown',
    );
    for (const r of outage) expect(r.values).toEqual({ state: 'unknown' });
  });
});
