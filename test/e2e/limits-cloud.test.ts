/**
 * Cloud limit schedules on the uplink's command topic (docs/mqtt-contract.md "Site limits"): the
 * same body and checks as PUT …/limits, answered with the stored schedule or the error, every
 * answer conforming to docs/asyncapi.yaml; the schedule is then in force (GET …/limits) and in the
 * uplink's status message. The demo
 * gateway uplinks to an in-process broker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partnerToken } from '../support/auth.js';
import { type CloudCommands, cloudCommands } from '../support/cloud-commands.js';
import { getJson } from '../support/demo.js';

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

describe('limit schedules on {prefix}/cmd/limits', () => {
  let cloud: CloudCommands;
  let demo: CloudCommands['demo'];
  const send = (payload: string) => cloud.send(payload);
  beforeAll(async () => {
    // the status refreshed every 5 s: the limits in it are seen without waiting a minute
    cloud = await cloudCommands('limits', Date.parse('2026-06-21T10:00:00Z'), { statusIntervalSeconds: 5 });
    demo = cloud.demo;
  });
  afterAll(async () => {
    await cloud?.close();
  });

  it('stores a schedule with the HTTP API’s checks, puts it in force, answers with it, and removes it', async () => {
    const t = Math.ceil(demo.clock.now() / 1000) * 1000 - 1000;
    const slots = [{ interval: `${iso(t)}/${iso(t + 3_600_000)}`, exportW: 0 }];
    const ok = await send(JSON.stringify({ requestId: 'fleet-1', slots }));
    expect(ok).toMatchObject({ v: 2, requestId: 'fleet-1', status: 'accepted', schedule: { source: 'cloud', slots } });
    const token = await partnerToken(demo.credentials, 'svc/plan.read');
    const limits = await getJson(`${demo.url}/api/v1/sites/demo-site/limits`, token);
    expect(limits.body.inForce).toMatchObject({ exportW: 0, sources: { exportW: 'schedule' } });

    // the uplink's status carries the limit in force with its source (docs/mqtt-contract.md "The status")
    const status = await cloud.status((b) => b.state === 'online' && b.limits?.inForce.exportW === 0);
    expect(status.limits).toMatchObject({
      inForce: { exportW: 0, importW: null, generationW: null, sources: { exportW: 'schedule' } },
      failSafe: false,
    });
    expect(status.limits.curtailedW).toBeGreaterThanOrEqual(0);

    const bad = await send(JSON.stringify({ requestId: 'fleet-2', slots: [{ interval: slots[0]!.interval }] }));
    expect(bad).toMatchObject({ requestId: 'fleet-2', status: 'error', code: 'LIMIT_REQUIRED' });
    expect((await getJson(`${demo.url}/api/v1/sites/demo-site/limits`, token)).body.slots).toEqual(slots);

    expect(await send(JSON.stringify({ requestId: 'fleet-3', delete: true }))).toMatchObject({
      status: 'accepted',
      schedule: null,
    });
    expect((await getJson(`${demo.url}/api/v1/sites/demo-site/limits`, token)).body.slots).toEqual([]);
  });

  it('answers malformed commands with a named error and keeps running', async () => {
    expect(await send('not json')).toMatchObject({ requestId: null, status: 'error', code: 'INVALID_COMMAND' });
    expect(await send(JSON.stringify({ requestId: 'x', slots: 'all' }))).toMatchObject({ code: 'INVALID_COMMAND' });
    expect(await send(JSON.stringify({ requestId: 'y', slots: [], delete: true }))).toMatchObject({
      code: 'INVALID_COMMAND',
    });
    expect(await send(JSON.stringify({ requestId: 'z', slots: [{ interval: 'x', exportW: -1 }] }))).toMatchObject({
      code: 'INVALID_COMMAND',
    });
    expect(demo.daemon.uplink!.health().connection.connected).toBe(true);
  });
});
