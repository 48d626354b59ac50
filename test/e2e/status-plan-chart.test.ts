/**
 * The status page's plan chart in a real browser (docs/optimiser.md "Reading the chart"): the demo
 * gateway in operationMode optimise on a time-of-use tariff, Debian's chromium driven headless by
 * playwright-core. The chart's seven series are drawn with one point per slot of the plan the API
 * serves, their values are the plan's, and each point sits where its panel's scale puts the value.
 * A screenshot is kept under the system's temp folder (sitegw-test-artifacts/) for a person to see.
 */
import { mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerTokens, partnerToken } from '../support/auth.js';
import { HAVE_CHROMIUM, launchChromium, warnWithoutChromium } from '../support/chromium.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';

const ARTIFACTS = join(tmpdir(), 'sitegw-test-artifacts');
warnWithoutChromium('plan chart browser test');

const SERIES = ['importPrice', 'exportPrice', 'pvW', 'loadW', 'batteryW', 'curtailW', 'socEnd'] as const;

interface ChartSlot extends Record<(typeof SERIES)[number], number> {
  start: string;
  mode: string;
}
interface PlanJson {
  timezone: string;
  plans: { deviceId: string; madeAt: string; slots: ChartSlot[] }[];
}

describe.skipIf(!HAVE_CHROMIUM)('plan chart on the status page', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    demo = await demoSite({
      // slow enough that the plan seldom changes while the page is read (a new one every 3 minutes)
      speed: 5,
      history: 'P1D',
      // a June morning: PV, load and a planned charge and discharge all have something to draw
      start: Date.UTC(2026, 5, 21, 4, 1),
      configure: (c) => {
        c.tariff = {
          type: 'time-of-use',
          periods: [
            { from: '00:00', to: '06:00', importPrice: 0.12, exportPrice: 0.05 },
            { from: '06:00', to: '17:00', importPrice: 0.3, exportPrice: 0.08 },
            { from: '17:00', to: '22:00', importPrice: 0.55, exportPrice: 0.08 },
            { from: '22:00', to: '24:00', importPrice: 0.3, exportPrice: 0.08 },
          ],
        } as NonNullable<typeof c.tariff>;
      },
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1200, height: 1000 } });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await demo?.cleanup();
  });

  it('draws the optimiser’s plan: every series, one point per slot, the plan’s values', async () => {
    const owner = (await customerTokens(demo.credentials, 'svc/device.read svc/device.write')).access_token;
    const partner = await partnerToken(demo.credentials);
    await waitFor('a state of charge', () => demo.sim.snapshot().battery[0]?.socPct);
    const patched = await fetch(`${demo.url}/api/v1/devices/inverter`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
      body: JSON.stringify({ operationMode: 'optimise' }),
    });
    expect(patched.status).toBe(200);
    await waitFor('a plan from the optimiser', async () => {
      const g = await getJson(`${demo.url}/api/v1/devices/inverter/plan`, partner);
      return g.status === 200 && g.body.source === 'optimiser';
    });
    // the chart's data is the owner's, like the rest of the page
    expect((await fetch(`${demo.url}/status/plan.json`)).status).toBe(401);

    await page.goto(`${demo.url}/`);
    await page.fill('#username', demo.credentials.owner.username);
    await page.fill('#password', demo.credentials.owner.password);
    await Promise.all([page.waitForURL(`${demo.url}/`), page.click('button[type=submit]')]);
    await page.waitForSelector('svg.plan[data-device="inverter"]');

    // the page, its data and the plan API read together; again if a new plan came in between
    const seen = await waitFor('the chart, its data and the plan API from the same plan', async () => {
      await page.reload();
      await page.waitForSelector('svg.plan[data-device="inverter"]');
      const drawn = await page.$$eval('svg.plan .panel', (panels) =>
        panels.map((p) => ({
          panel: p.getAttribute('data-panel'),
          lo: Number(p.getAttribute('data-lo')),
          hi: Number(p.getAttribute('data-hi')),
          top: Number(p.getAttribute('data-top')),
          height: Number(p.getAttribute('data-height')),
          series: [...p.querySelectorAll('polyline.series')].map((l) => ({
            name: l.getAttribute('data-series') ?? '',
            values: (l.getAttribute('data-values') ?? '').split(',').map(Number),
            ys: (l.getAttribute('points') ?? '').split(' ').map((xy: string) => Number(xy.split(',')[1])),
          })),
        })),
      );
      const data = (await (await page.request.get(`${demo.url}/status/plan.json`)).json()) as PlanJson;
      const api = await getJson(`${demo.url}/api/v1/devices/inverter/plan`, partner);
      const chart = data.plans.find((p) => p.deviceId === 'inverter');
      const again = (await (await page.request.get(`${demo.url}/status/plan.json`)).json()) as PlanJson;
      const firstDrawn = drawn.find((p) => p.panel === 'soc')?.series[0]?.values[0];
      // the same plan throughout: plan.json unchanged around the API read, and drawn from it
      if (!chart || JSON.stringify(again) !== JSON.stringify(data) || firstDrawn !== chart.slots[0]?.socEnd)
        return undefined;
      return { drawn, chart, api: api.body as { slots: { interval: string; mode: string; powerW?: number }[] } };
    });
    const { drawn, chart, api } = seen;

    expect(chart.slots.length).toBe(api.slots.length);
    expect(api.slots.length).toBeGreaterThan(96);
    expect(drawn.map((p) => p.panel)).toEqual(['price', 'power', 'soc']);
    const lines = drawn.flatMap((p) => p.series.map((s) => ({ ...s, p })));
    expect(lines.map((l) => l.name).sort()).toEqual([...SERIES].sort());
    for (const l of lines) {
      const name = l.name as (typeof SERIES)[number];
      expect(l.ys.length, `${name} points`).toBe(api.slots.length);
      expect(l.values, `${name} values`).toEqual(chart.slots.map((s) => s[name]));
      // each point where the panel's scale puts its value
      l.ys.forEach((y: number, i: number) =>
        expect(y, `${name} slot ${i}`).toBeCloseTo(
          l.p.top + (l.p.height * (l.p.hi - l.values[i]!)) / (l.p.hi - l.p.lo),
          1,
        ),
      );
    }
    // the chart's slots are the plan's: its intervals, and the battery power the plan sends
    chart.slots.forEach((s, i) => {
      const slot = api.slots[i]!;
      expect(s.start).toBe(slot.interval.split('/')[0]);
      expect(s.mode).toBe(slot.mode);
      if (slot.mode === 'charge') expect(s.batteryW).toBe(slot.powerW);
      if (slot.mode === 'discharge') expect(s.batteryW).toBe(-slot.powerW!);
      if (slot.mode === 'hold') expect(s.batteryW).toBe(0);
    });
    // the tariff's evening price is in the chart, and the plan moves the battery somewhere
    expect(Math.max(...chart.slots.map((s) => s.importPrice))).toBe(0.55);
    expect(chart.slots.some((s) => s.batteryW !== 0)).toBe(true);
    // PV learned from the day of history (a PV array's power_W is negative while it produces)
    expect(Math.max(...chart.slots.map((s) => s.pvW))).toBeGreaterThan(1000);

    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, 'status-plan-chart.png');
    await page.locator('#plan-chart').screenshot({ path: shot });
    expect(statSync(shot).size).toBeGreaterThan(5000);
  }, 90_000);

  it('with the optimiser’s plan gone, the chart says so instead of drawing an old plan', async () => {
    const owner = (await customerTokens(demo.credentials, 'svc/device.read svc/device.write')).access_token;
    const r = await fetch(`${demo.url}/api/v1/devices/inverter`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
      body: JSON.stringify({ operationMode: 'self-consumption' }),
    });
    expect(r.status).toBe(200);
    await page.reload();
    await waitFor('the chart area without a plan', async () =>
      ((await page.textContent('#plan-chart')) ?? '').includes('No plan from the optimiser'),
    );
    expect(await page.locator('svg.plan').count()).toBe(0);
  });
});
