/**
 * Cloud plans on the uplink's command topic (docs/mqtt-contract.md "Plans"): the same body and
 * checks as PUT …/plan, answered with the stored plan or the error, every answer conforming to
 * docs/asyncapi.yaml. The demo gateway uplinks to an in-process broker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partnerToken } from '../support/auth.js';
import { type CloudCommands, cloudCommands } from '../support/cloud-commands.js';
import { getJson } from '../support/demo.js';

const Q = 15 * 60_000;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

describe('plans on {prefix}/cmd/plan', () => {
  let cloud: CloudCommands;
  let demo: CloudCommands['demo'];
  const send = (payload: string) => cloud.send(payload);
  beforeAll(async () => {
    cloud = await cloudCommands('plan', Date.parse('2026-01-15T00:00:00Z'));
    demo = cloud.demo;
  });
  afterAll(async () => {
    await cloud?.close();
  });

  it('stores a plan with the same checks as the HTTP API and answers with it', async () => {
    const t = Math.ceil((demo.clock.now() + 60_000) / Q) * Q;
    const slots = [{ interval: `${iso(t)}/${iso(t + Q)}`, mode: 'charge', powerW: 1500, targetSoc: 80 }];
    const ok = await send(JSON.stringify({ requestId: 'fleet-1', deviceId: 'inverter', slots }));
    expect(ok).toMatchObject({
      v: 2,
      requestId: 'fleet-1',
      status: 'accepted',
      plan: { source: 'cloud', deviceId: 'inverter' },
    });
    expect(ok.plan.slots).toEqual([{ ...slots[0], status: 'pending' }]);
    const token = await partnerToken(demo.credentials);
    const stored = await getJson(`${demo.url}/api/v1/devices/inverter/plan`, token);
    expect(stored.body.planId).toBe(ok.plan.planId);
    // the same command again (a resend after no answer came): the same plan, no new one
    const again = await send(JSON.stringify({ requestId: 'fleet-1', deviceId: 'inverter', slots }));
    expect(again).toMatchObject({ siteId: 'demo-site', status: 'accepted', plan: { planId: ok.plan.planId } });

    const bad = await send(
      JSON.stringify({
        requestId: 'fleet-2',
        deviceId: 'inverter',
        slots: [{ ...slots[0], interval: `${iso(t + 60_000)}/${iso(t + Q)}` }],
      }),
    );
    expect(bad).toMatchObject({ requestId: 'fleet-2', status: 'error', code: 'SLOT_NOT_ALIGNED' });
    // the refused plan left the stored one alone
    expect((await getJson(`${demo.url}/api/v1/devices/inverter/plan`, token)).body.planId).toBe(ok.plan.planId);

    const gone = await send(JSON.stringify({ requestId: 'fleet-3', deviceId: 'inverter__bb_agg', delete: true }));
    expect(gone).toMatchObject({ status: 'accepted', plan: null });
    expect((await getJson(`${demo.url}/api/v1/devices/inverter/plan`, token)).status).toBe(404);
  });

  it('answers malformed commands with a named error and keeps running', async () => {
    expect(await send('not json')).toMatchObject({ requestId: null, status: 'error', code: 'INVALID_COMMAND' });
    expect(await send(JSON.stringify({ requestId: 'x', deviceId: 'inverter', slots: 'all' }))).toMatchObject({
      requestId: 'x',
      code: 'INVALID_COMMAND',
    });
    expect(await send(JSON.stringify({ requestId: 'y', deviceId: 'inverter' }))).toMatchObject({
      code: 'INVALID_COMMAND',
    });
    expect(await send(JSON.stringify({ requestId: 'z', deviceId: 'grid-meter', delete: true }))).toMatchObject({
      code: 'DEVICE_NOT_FOUND',
    });
    expect(await send(JSON.stringify([1, 2]))).toMatchObject({ code: 'INVALID_COMMAND' });
    expect(demo.daemon.uplink!.health().connection.connected).toBe(true);
  });
});
