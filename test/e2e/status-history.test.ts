/**
 * The status page's history charts in a real browser (Debian's chromium through playwright-core),
 * the browser in another zone and locale than the site. The demo's clock starts just after the
 * end of Europe/Berlin's DST (Sunday 25 October 2026, 03:00 CEST back to 02:00 CET) with two days
 * of history, so the day view holds the 02:00 hour twice and the week view the 25-hour day. Every
 * point drawn is checked against the public API for the same interval: the telemetry entries'
 * energy counters (a period's energy is its end counter less the previous period's), their SoC,
 * and the savings entries.
 */
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerTokens } from '../support/auth.js';
import { HAVE_CHROMIUM, launchChromium, warnWithoutChromium } from '../support/chromium.js';
import { demoSite, getJson } from '../support/demo.js';

const ARTIFACTS = join(tmpdir(), 'sitegw-test-artifacts');
warnWithoutChromium('status history browser test');

// the demo site's streams (src/demo/default-site.ts): counter = the telemetry field each series reads
const SERIES = {
  pv: [['inverter__dcm', 'energy_Wh_decrement']],
  import: [['grid-meter__GRID_METER_DERIVED', 'energy_Wh_increment']],
  export: [['grid-meter__GRID_METER_DERIVED', 'energy_Wh_decrement']],
  batteryIn: [['inverter__bb_agg', 'energy_Wh_increment']],
  batteryOut: [['inverter__bb_agg', 'energy_Wh_decrement']],
  house: [['house-meter', 'energy_Wh_increment']],
} as const;

interface Drawn {
  view: string;
  labels: { interval: string; text: string }[];
  panels: {
    panel: string;
    lo: number;
    hi: number;
    height: number;
    series: { name: string; values: (number | null)[]; bars: number[]; heights: number[] }[];
  }[];
}

type Entry = Record<string, number | string> & { interval: string };

const berlin = (view: string) =>
  new Intl.DateTimeFormat(
    'en-GB',
    view === 'day'
      ? { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }
      : view === 'week'
        ? { timeZone: 'Europe/Berlin', weekday: 'short', day: 'numeric' }
        : { timeZone: 'Europe/Berlin', day: 'numeric' },
  );

describe.skipIf(!HAVE_CHROMIUM)('history charts on the status page', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let browser: Browser;
  let page: Page;
  let token: string;

  beforeAll(async () => {
    demo = await demoSite({
      // real speed: no bucket closes while the page and the API are read
      speed: 1,
      history: 'P2D',
      // Monday 26 October 2026, 00:30 CET
      start: Date.UTC(2026, 9, 25, 23, 30),
    });
    token = (await customerTokens(demo.credentials, 'svc/device.read')).access_token;
    browser = await launchChromium();
    page = await browser.newPage({
      viewport: { width: 1200, height: 1400 },
      timezoneId: 'Asia/Tokyo',
      locale: 'en-US',
    });
    await page.goto(`${demo.url}/`);
    await page.fill('#username', demo.credentials.owner.username);
    await page.fill('#password', demo.credentials.owner.password);
    await Promise.all([page.waitForURL(`${demo.url}/`), page.click('button[type=submit]')]);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await demo?.cleanup();
  });

  async function drawn(view: string): Promise<Drawn> {
    await page.click(`button[data-history="${view}"]`);
    await page.waitForSelector(`svg.history[data-view="${view}"]`);
    return page.$eval('svg.history', (svg) => ({
      view: svg.getAttribute('data-view') ?? '',
      labels: [...svg.querySelectorAll('text.time')].map((t) => ({
        interval: t.getAttribute('data-interval') ?? '',
        text: t.textContent ?? '',
      })),
      panels: [...svg.querySelectorAll('.panel')].map((p) => ({
        panel: p.getAttribute('data-panel') ?? '',
        lo: Number(p.getAttribute('data-lo')),
        hi: Number(p.getAttribute('data-hi')),
        height: Number(p.getAttribute('data-height')),
        series: [...p.querySelectorAll('.series')].map((s) => ({
          name: s.getAttribute('data-series') ?? '',
          values: (s.getAttribute('data-values') ?? '').split(',').map((v: string) => (v === '' ? null : Number(v))),
          bars: [...s.querySelectorAll('rect')].map((r) => Number(r.getAttribute('data-value'))),
          heights: [...s.querySelectorAll('rect')].map((r) => Number(r.getAttribute('height'))),
        })),
      })),
    }));
  }

  async function telemetry(stream: string, from: string, to: string, resolution: string, include = 'energy') {
    const q = `interval=${from}/${to}&resolution=${resolution}&include=${include}`;
    const r = await getJson(`${demo.url}/api/v1/devices/${stream}/telemetry?${q}`, token);
    expect(r.status).toBe(200);
    return r.body.entries as Entry[];
  }

  /** What the API says for the chart's intervals: energy, SoC and savings per period. */
  async function expected(intervals: string[], resolution: string) {
    const from = new Date(Date.parse(intervals[0]!.split('/')[0]!) - 2 * 86_400_000).toISOString();
    const to = intervals[intervals.length - 1]!.split('/')[1]!;
    const energy: Record<string, (number | null)[]> = {};
    for (const [name, parts] of Object.entries(SERIES)) {
      const per = await Promise.all(
        parts.map(([s, field]) => telemetry(s, from, to, resolution).then((e) => ({ e, field }))),
      );
      energy[name] = intervals.map((iv) => {
        let wh = 0;
        for (const { e, field } of per) {
          const end = e.find((x) => x.interval === iv)?.[field];
          const base = e.find((x) => x.interval.split('/')[1] === iv.split('/')[0])?.[field];
          if (typeof end !== 'number' || typeof base !== 'number') return null;
          // energy_Wh_decrement counts down (docs/api.md): energy out is how far it fell
          wh += field === 'energy_Wh_decrement' ? base - end : end - base;
        }
        return Math.round(wh) / 1000;
      });
    }
    const socs = await telemetry('inverter__bb_agg', from, to, resolution, 'default');
    const soc = intervals.map((iv) => {
      const v = socs.find((x) => x.interval === iv)?.soc;
      return typeof v === 'number' ? Math.round(v * 10) / 10 : null;
    });
    const s = await getJson(
      `${demo.url}/api/v2/sites/${demo.siteId}/savings?interval=${intervals[0]!.split('/')[0]}/${to}&resolution=${resolution}`,
      token,
    );
    expect(s.status).toBe(200);
    const savings = intervals.map(
      (iv) =>
        (s.body.entries as { interval: string; savings: number }[]).find((x) => x.interval === iv)?.savings ?? null,
    );
    return { energy, soc, savings };
  }

  async function checkView(view: string, resolution: string, periods: number) {
    const d = await drawn(view);
    const intervals = d.labels.map((l) => l.interval);
    expect(intervals.length).toBe(periods);
    // every period labelled in the site's zone, 24-hour, whatever the browser's zone and locale
    const fmt = berlin(view);
    for (const l of d.labels) expect(l.text).toBe(fmt.format(new Date(l.interval.split('/')[0]!)));
    const want = await expected(intervals, resolution);
    const byName = Object.fromEntries(d.panels.flatMap((p) => p.series.map((s) => [s.name, { ...s, p }])));
    expect(Object.keys(byName).sort()).toEqual([...Object.keys(SERIES), 'savings', 'soc'].sort());
    for (const name of Object.keys(SERIES)) expect(byName[name]!.values, `${view} ${name}`).toEqual(want.energy[name]);
    expect(byName.soc!.values, `${view} soc`).toEqual(want.soc);
    expect(byName.savings!.values, `${view} savings`).toEqual(want.savings);
    // something to see: energy in most periods, and each bar as tall as its panel's scale puts it
    expect(want.energy.house!.filter((v) => v !== null).length).toBeGreaterThan(view === 'day' ? 20 : 1);
    // every energy is a quantity moved, never negative (PV, export, battery out included)
    for (const name of Object.keys(SERIES))
      for (const v of want.energy[name]!) if (v !== null) expect(v, name).toBeGreaterThanOrEqual(0);
    expect(Math.max(...want.energy.pv!.map((v) => v ?? 0))).toBeGreaterThan(0);
    for (const s of Object.values(byName)) {
      expect(s.bars).toEqual(s.p.panel === 'soc' ? [] : s.values.filter((v) => v !== null));
      s.heights.forEach((h, i) =>
        expect(h, `${s.name} bar ${i}`).toBeCloseTo((s.p.height * Math.abs(s.bars[i]!)) / (s.p.hi - s.p.lo), 1),
      );
    }
    return d;
  }

  it('the last day: energy per hour equals the API, the 02:00 hour twice on the DST day', async () => {
    const d = await checkView('day', 'PT1H', 24);
    expect(d.labels[0]!.interval).toBe('2026-10-25T00:00:00Z/2026-10-25T01:00:00Z');
    expect(d.labels.filter((l) => l.text === '02:00').map((l) => l.interval)).toEqual([
      '2026-10-25T00:00:00Z/2026-10-25T01:00:00Z',
      '2026-10-25T01:00:00Z/2026-10-25T02:00:00Z',
    ]);
  }, 60_000);

  it('the last week and month: energy per local day equals the API, the DST day 25 hours long', async () => {
    const week = await checkView('week', 'P1D', 7);
    expect(week.labels.map((l) => l.text)).toEqual([
      'Tue 20',
      'Wed 21',
      'Thu 22',
      'Fri 23',
      'Sat 24',
      'Sun 25',
      'Mon 26',
    ]);
    expect(week.labels[5]!.interval).toBe('2026-10-24T22:00:00Z/2026-10-25T23:00:00Z');
    const house = week.panels[0]!.series.find((s) => s.name === 'house')!;
    expect(house.values[5], 'the whole DST day has a value').not.toBeNull();
    const month = await checkView('month', 'P1D', 31);
    expect(month.labels[30]!.text).toBe('26');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.click('button[data-history="day"]');
    await page.waitForSelector('svg.history[data-view="day"]');
    await page.locator('#history').screenshot({ path: join(ARTIFACTS, 'status-history.png') });
  }, 60_000);

  it('is the owner’s, and refuses a view it does not have by name', async () => {
    expect((await fetch(`${demo.url}/status/history.json`)).status).toBe(401);
    const bad = await page.request.get(`${demo.url}/status/history.json?view=year`);
    expect(bad.status()).toBe(400);
    expect((await bad.json()).code).toBe('INVALID_VIEW');
    const twice = await page.request.get(`${demo.url}/status/history.json?view=day&view=week`);
    expect(twice.status()).toBe(400);
    expect((await twice.json()).code).toBe('INVALID_VIEW');
  });
});
