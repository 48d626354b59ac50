/**
 * The installer's status page in a real browser: Debian's chromium driven headless by
 * playwright-core (no browser download). Log in as the owner, see every device with its state,
 * values and errors, the power flow, the uplink and the grid events, and watch the page follow
 * a grid outage live. A screenshot is kept in test-artifacts/ (gitignored) for a person to look at.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAVE_CHROMIUM, launchChromium, warnWithoutChromium } from '../support/chromium.js';
import { demoSite, waitFor } from '../support/demo.js';

const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url).pathname;
warnWithoutChromium('status page browser test');

describe.skipIf(!HAVE_CHROMIUM)('status page in headless Chromium', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    demo = await demoSite({
      speed: 60,
      history: 'PT2H',
      // midday in June: the sun is up, the flow diagram has something to show
      start: Date.UTC(2026, 5, 21, 10, 0),
      configure: (c) => {
        const house = c.devices.find((d) => d.id === 'house-meter')!;
        // one device on a dead port, so the page has something failing to show
        if (house.connection.type === 'tcp') house.connection.port = 9;
      },
    });
    browser = await launchChromium();
    // a browser far from the site (Europe/Berlin) with a 12-hour locale: the page must not follow it
    page = await browser.newPage({
      viewport: { width: 1200, height: 1000 },
      timezoneId: 'America/Los_Angeles',
      locale: 'en-US',
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await demo?.cleanup();
  });

  it('sends a visitor without a session to the login form, and refuses a wrong password', async () => {
    await page.goto(`${demo.url}/`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.fill('#username', demo.credentials.owner.username);
    await page.fill('#password', 'wrong password');
    await page.click('button[type=submit]');
    await expect.poll(() => page.textContent('[role=alert]')).toContain('Wrong user name or password');
  });

  it('after login: devices with state, values and errors; power flow; uplink; grid events', async () => {
    await page.fill('#password', demo.credentials.owner.password);
    await Promise.all([page.waitForURL(`${demo.url}/`), page.click('button[type=submit]')]);
    const rows = page.locator('#devices tbody tr');
    await expect.poll(() => rows.count()).toBe(5);
    await waitFor('the house meter shown offline with its errors', async () => {
      const row = page.locator('tr[data-device="house-meter"]');
      return (
        (await row.getAttribute('class')) === 'offline' && /connection [1-9]/.test((await row.textContent()) ?? '')
      );
    });
    const inverter = page.locator('tr[data-device="inverter"]');
    expect(await inverter.getAttribute('class')).toBe('online');
    expect(await inverter.textContent()).toMatch(/AC \d+(\.\d+)? k?W/);
    // the live channels an installer looks at first: frequency, temperature, status
    expect(await inverter.textContent()).toMatch(
      /(49|50)\.\d\d Hz · \d+\.\d °C · (off|sleeping|starting|running|throttled|shutting_down|fault|standby)/,
    );
    expect(await page.locator('tr[data-device="grid-meter"]').textContent()).toMatch(/relay ok · (49|50)\.\d\d Hz/);
    expect(await page.textContent('#health')).toMatch(/degraded/);
    expect(await page.textContent('#health')).toContain('1 of 5 devices not answering (connection: 1)');
    // the four arms of the flow, with values from the live readings
    for (const arm of ['pv', 'battery', 'house', 'grid']) expect(await page.locator(`#flow-${arm}`).count()).toBe(1);
    await waitFor('a PV value', async () => /\d/.test((await page.textContent('#flow-pv .value')) ?? ''));
    expect(await page.getAttribute('#flow-pv', 'class')).toBe('arm in');
    expect(await page.textContent('#uplink')).toContain('No uplink configured');
  });

  it('follows a grid outage live: the relay and a grid event appear without a reload', async () => {
    const updates = Number((await page.getAttribute('body', 'data-updates')) ?? 0);
    demo.sim.setGridOutage(true);
    await waitFor(
      'the outage on the page',
      async () => ((await page.textContent('#flow')) ?? '').includes('Relay: not_present'),
      20_000,
    );
    await waitFor(
      'the grid event listed',
      async () => ((await page.textContent('#events')) ?? '').includes('not_present'),
      20_000,
    );
    expect(Number(await page.getAttribute('body', 'data-updates'))).toBeGreaterThan(updates);
    expect(await page.textContent('#flow-grid .name')).toBe('Grid (off)');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'status-page.png'), fullPage: true });
    demo.sim.setGridOutage(false);
  }, 40_000);

  it('shows every time in the site’s timezone with a 24-hour clock, whatever the browser’s zone', async () => {
    const berlin = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Berlin',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    const local = (iso: string) => {
      const p = Object.fromEntries(berlin.formatToParts(new Date(iso)).map((x) => [x.type, x.value]));
      return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
    };
    const data = (await (await page.request.get(`${demo.url}/status.json`)).json()) as {
      gridEvents: { timestamp: string }[];
    };
    expect(data.gridEvents.length).toBeGreaterThan(0);
    const events = (await page.textContent('#events')) ?? '';
    for (const g of data.gridEvents) expect(events).toContain(local(g.timestamp));
    const updated = page.locator('#updated');
    await waitFor('the footer after an update', async () => /^updated /.test((await updated.textContent()) ?? ''));
    expect(await updated.textContent()).toMatch(/^updated \d\d:\d\d:\d\d CES?T$/);
    const text = (await page.textContent('body')) ?? '';
    expect(text).not.toMatch(/\d\d:\d\d(:\d\d)?Z/);
    expect(text).not.toMatch(/\b(AM|PM)\b/);
    expect(text).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d CES?T/);
  });

  it('logging out ends the session', async () => {
    await Promise.all([page.waitForURL(`${demo.url}/login`), page.click('header button[type=submit]')]);
    await page.goto(`${demo.url}/`);
    expect(new URL(page.url()).pathname).toBe('/login');
  });
});
