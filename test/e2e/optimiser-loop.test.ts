/**
 * The optimiser's loop end to end (docs/optimiser.md "The daemon's loop"): the demo gateway with a
 * day of history, a time-of-use tariff whose night peak pays for export; operationMode optimise
 * makes the gateway plan from its own data, the executor follows the plan over real Modbus, and
 * the battery aggregate's closed bucket shows the planned direction. A case the envelope makes
 * infeasible leaves the battery in self-consumption with a health problem. Runs at 120×.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InverterDevice } from '../../src/sim/device-images.js';
import { customerTokens, partnerToken } from '../support/auth.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';

type Demo = Awaited<ReturnType<typeof demoSite>>;
const Q = 15 * 60_000;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
// 01:00 in Berlin on a winter Thursday: no PV, so the battery moves only as planned
const START = Date.parse('2026-01-15T00:00:00Z');

interface PlanBody {
  source: string;
  slots: { interval: string; mode: string; powerW?: number }[];
}

describe('operationMode optimise', () => {
  let d: Demo;
  let owner: string;
  let partner: string;
  beforeAll(async () => {
    d = await demoSite({
      speed: 120,
      start: START,
      history: 'P1D',
      configure: (c) => {
        // exporting at night earns 0.50, charging by day costs 0.05: the optimum discharges now
        c.tariff = {
          type: 'time-of-use',
          periods: [
            { from: '00:00', to: '06:00', importPrice: 0.6, exportPrice: 0.5 },
            { from: '06:00', to: '24:00', importPrice: 0.05, exportPrice: 0 },
          ],
        } as NonNullable<typeof c.tariff>;
      },
    });
    owner = (await customerTokens(d.credentials, 'svc/device.read svc/device.write')).access_token;
    partner = await partnerToken(d.credentials);
  });
  afterAll(async () => d?.cleanup());

  const patchMode = (mode: string) =>
    fetch(`${d.url}/api/v1/devices/inverter`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
      body: JSON.stringify({ operationMode: mode }),
    });
  const plan = async () => {
    const g = await getJson(`${d.url}/api/v1/devices/inverter/plan`, partner);
    return g.status === 200 ? (g.body as PlanBody) : undefined;
  };

  it('plans from the gateway’s own data, and the battery’s bucket shows the planned direction', async () => {
    // the loop needs a state of charge: wait for the battery aggregate's first reading
    await waitFor('a state of charge', () => d.sim.snapshot().battery[0]?.socPct);
    const r = await patchMode('optimise');
    expect(r.status).toBe(200);
    const first = await waitFor('a plan from the optimiser', async () => {
      const p = await plan();
      return p?.source === 'optimiser' ? p : undefined;
    });
    // 48 hours of quarter hours from the current one (the tariff has a price for each)
    expect(first.slots.length).toBe(192);
    expect(first.slots.some((s) => s.mode === 'discharge')).toBe(true);

    // the plan made at the start of a whole slot, and what that slot's bucket measured
    const t = Math.ceil(d.clock.now() / Q) * Q;
    const atT = await waitFor(
      'the plan made at the next quarter hour',
      async () => {
        const p = await plan();
        return p?.source === 'optimiser' && p.slots[0]!.interval.startsWith(iso(t)) ? p : undefined;
      },
      60_000,
    );
    const slot = atT.slots[0]!;
    expect(['charge', 'discharge']).toContain(slot.mode);
    const bucket = await waitFor(
      'the slot’s bucket closed',
      async () => {
        const g = await getJson(
          `${d.url}/api/v1/devices/inverter__bb_agg/telemetry?interval=${iso(t)}/${iso(t + Q)}`,
          partner,
        );
        return g.body.entries?.[0] as { power_W: number } | undefined;
      },
      60_000,
    );
    // battery power: charge positive (docs/design.md signs)
    expect(Math.sign(bucket.power_W)).toBe(slot.mode === 'charge' ? 1 : -1);
    expect(Math.abs(bucket.power_W)).toBeGreaterThan(0.5 * slot.powerW!);
  });

  it('an infeasible case leaves the battery in self-consumption, said in health, and the loop keeps running', async () => {
    // no import and no discharge: the night's load can be met by nothing
    const env = d.daemon.ctx.config.control;
    const { importLimitW, maxDischargeW } = env;
    env.importLimitW = 0;
    env.maxDischargeW = 0;
    expect((await patchMode('optimise')).status).toBe(200);
    const health = await waitFor('the optimiser’s problem in health', async () => {
      const h = await getJson(`${d.url}/healthz`);
      const problems = (h.body.problems ?? []) as string[];
      return problems.some((p) => /optimiser could not plan/.test(p)) ? problems : undefined;
    });
    expect(health.join('\n')).toMatch(/self-consumption/);
    expect(await plan()).toBeUndefined();
    await waitFor(
      'the inverter in self-consumption',
      () => (d.sim.devices[0] as InverterDevice).control.window(d.sim.time) === null,
    );
    // a feasible envelope again: the next quarter hour plans
    Object.assign(env, { importLimitW, maxDischargeW });
    await waitFor('a plan again', async () => (await plan())?.source === 'optimiser', 60_000);
    expect((await getJson(`${d.url}/healthz`)).body.problems ?? []).not.toContain(expect.stringMatching(/optimiser/));
  });
});
