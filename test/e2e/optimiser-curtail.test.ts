/**
 * The optimiser plans PV curtailment where the export price is negative, and the site does it
 * (docs/optimiser.md "Limits and curtailment"): the demo gateway on a June noon with a day of
 * history, a tariff paying −0.05 per exported kWh from 12:00 to 14:00 local, operationMode
 * optimise, and a partner's zero-export slot from 15:00 to 15:30. The plan's slots in those windows
 * say PV curtailed (plan.json curtailW), the other sunny slots do not, and the simulated site, its inverter honouring SunSpec 704 (output a
 * second behind its limit, the meter reading house minus output), exports nothing then: the
 * battery charges at its most and the limits loop holds the rest of the PV back. Real speed: the
 * limits loop reads the meter each second.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSimConfig } from '../../src/sim/model.js';
import { customerTokens, partnerToken } from '../support/auth.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';

type Demo = Awaited<ReturnType<typeof demoSite>>;
/** the simulated site now, on its own clock */
const site = (d: Demo) => {
  d.sim.update(d.clock.now());
  return d.sim.snapshot();
};
// 12:30 in Berlin on midsummer's day: the PV well above a quiet house and a battery taking 2 kW
const START = Date.parse('2026-06-21T10:30:00Z');
const Q = 15 * 60_000;
const RATED = 6000;
const ONE_PCT = 0.01 * RATED;
/** 15:00 local: a scheduled zero-export half hour */
const ZERO_EXPORT = Date.parse('2026-06-21T13:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

interface ChartSlot {
  start: string;
  exportPrice: number;
  pvW: number;
  loadW: number;
  batteryW: number;
  curtailW: number;
}

describe('the optimiser at a negative export price', () => {
  let d: Demo;
  let owner: string;
  let partner: string;
  let cookie: string;
  beforeAll(async () => {
    const sim = defaultSimConfig();
    sim.weather.cloudiness = 0;
    sim.house.applianceRate = 0;
    sim.inverter.limitModels = [704];
    // a battery that cannot take the whole surplus, 2 x 1000 W, and is far from full after the day of history
    for (const b of sim.battery.blocks) Object.assign(b, { maxChargeW: 1000, capacityWh: 40_000, initialSocPct: 20 });
    d = await demoSite({
      speed: 1,
      start: START,
      history: 'P1D',
      sim,
      pollSeconds: 5,
      configure: (c) => {
        // the plan knows the battery takes 2 kW at most
        c.control.maxChargeW = 2000;
        c.tariff = {
          type: 'time-of-use',
          periods: [
            { from: '00:00', to: '12:00', importPrice: 0.3, exportPrice: 0.08 },
            { from: '12:00', to: '14:00', importPrice: 0.3, exportPrice: -0.05 },
            { from: '14:00', to: '24:00', importPrice: 0.3, exportPrice: 0.08 },
          ],
        } as NonNullable<typeof c.tariff>;
      },
    });
    owner = (await customerTokens(d.credentials, 'svc/device.read svc/device.write')).access_token;
    partner = await partnerToken(d.credentials);
    const login = await fetch(`${d.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(d.credentials.owner),
      redirect: 'manual',
    });
    cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  }, 180_000);
  afterAll(async () => d?.cleanup());

  it('plans PV curtailed in the negative slots only, and the site exports nothing then, the battery first', async () => {
    await waitFor('a state of charge', () => d.sim.snapshot().battery[0]?.socPct, 30_000);
    // a partner's zero-export slot from 15:00 to 15:30 local, where the export pays 0.08
    const scheduled = await fetch(`${d.url}/api/v1/sites/${d.siteId}/limits`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${partner}`, 'content-type': 'application/json' },
      body: JSON.stringify({ slots: [{ interval: `${iso(ZERO_EXPORT)}/${iso(ZERO_EXPORT + 2 * Q)}`, exportW: 0 }] }),
    });
    expect(scheduled.status, await scheduled.clone().text()).toBe(200);
    const r = await fetch(`${d.url}/api/v1/devices/inverter`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
      body: JSON.stringify({ operationMode: 'optimise' }),
    });
    expect(r.status).toBe(200);
    await waitFor(
      'a plan from the optimiser',
      async () => {
        const g = await getJson(`${d.url}/api/v1/devices/inverter/plan`, partner);
        return g.status === 200 && g.body.source === 'optimiser';
      },
      60_000,
    );
    const chart = await waitFor('the plan chart', async () => {
      const res = await fetch(`${d.url}/status/plan.json`, { headers: { cookie } });
      const body = (await res.json()) as { plans: { deviceId: string; slots: ChartSlot[] }[] };
      return body.plans.find((p) => p.deviceId === 'inverter');
    });
    const slots = chart.slots;
    const at = (s: ChartSlot) => Date.parse(s.start);
    // the quarter hour running now is negative, sunny, and the plan curtails in it
    expect(at(slots[0]!)).toBe(Math.floor(d.clock.now() / Q) * Q);
    expect(slots[0]!.exportPrice).toBe(-0.05);
    expect(slots[0]!.pvW).toBeGreaterThan(slots[0]!.loadW + 2500);
    expect(slots[0]!.curtailW).toBeGreaterThan(500);
    // the schedule's zero export: curtailed though the export pays (the surplus over the battery's 2 kW)
    const limited = (s: ChartSlot) => at(s) >= ZERO_EXPORT && at(s) < ZERO_EXPORT + 2 * Q;
    const zero = slots.filter(limited);
    expect(zero).toHaveLength(2);
    for (const s of zero) {
      expect(s.exportPrice).toBe(0.08);
      expect(s.curtailW, s.start).toBeGreaterThan(500);
    }
    for (const s of slots) {
      // curtailed only where exporting would cost or the schedule forbids it, never more than the surplus
      if (s.curtailW > 0 && !limited(s)) expect(s.exportPrice, s.start).toBeLessThan(0);
      expect(s.curtailW, s.start).toBeLessThanOrEqual(Math.max(0, s.pvW - s.loadW - Math.max(0, s.batteryW)) + 100);
    }
    // the sunny afternoon at 0.08 per kWh exports what the battery leaves: nothing curtailed there
    const afternoon = slots.filter((s) => s.exportPrice > 0 && s.pvW > s.loadW + 3000 && !limited(s));
    expect(afternoon.length).toBeGreaterThan(4);
    expect(afternoon.every((s) => s.curtailW === 0)).toBe(true);

    // the site: nothing exported while the price is negative, PV held back only beyond the battery
    await waitFor(
      'zero export',
      () => {
        const x = site(d);
        return -x.gridW < ONE_PCT && x.pvCurtailed;
      },
      30_000,
    );
    const until = Date.now() + 8000;
    while (Date.now() < until) {
      const x = site(d);
      expect(-x.gridW).toBeLessThanOrEqual(ONE_PCT);
      const battery = x.battery.reduce((a, b) => a + b.w, 0);
      if (x.pvCurtailed) expect(battery).toBeGreaterThan(1990);
      await new Promise((res) => setTimeout(res, 200));
    }
    const metrics = await (await fetch(`${d.url}/metrics`, { headers: { authorization: `Bearer ${partner}` } })).text();
    expect(metrics).toContain('sitegw_site_limit_watts{limit="exportW",source="price"} 0');
  }, 180_000);
});
