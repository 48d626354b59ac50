/**
 * The demo holds a limit (docs/limits.md): `sitegw demo` at its own speed (1) configures the site's
 * export limit DEMO_EXPORT_LIMIT_W in its site.yaml, which the config schema accepts, and its
 * simulated inverter honours SunSpec 704, so on a sunny noon with the battery full the grid meter's
 * export is held at the limit, and /metrics and the status page say so. A faster demo holds none.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_EXPORT_LIMIT_W, demoSiteConfig } from '../../src/demo/default-site.js';
import { type Demo, startDemo } from '../../src/demo/demo.js';
import { defaultSimConfig } from '../../src/sim/model.js';
import { partnerToken } from '../support/auth.js';
import { waitFor } from '../support/demo.js';

const NOON = Date.parse('2026-06-21T10:30:00Z');
const ONE_PCT = 60;
const ENDPOINTS = { inverter: { host: '127.0.0.1', port: 1502 }, meter: { host: '127.0.0.1', port: 1503 } };

let running: { demo: Demo; dir: string } | undefined;
afterEach(async () => {
  await running?.demo.stop();
  if (running) rmSync(running.dir, { recursive: true, force: true });
  running = undefined;
});

async function demo(opts: { speed: number; sunnyNoon?: boolean }): Promise<Demo> {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-demo-limit-'));
  const sim = defaultSimConfig();
  if (opts.sunnyNoon) {
    sim.weather.cloudiness = 0;
    sim.house.applianceRate = 0;
    for (const b of sim.battery.blocks) b.initialSocPct = b.socMaxPct;
  }
  // as `sitegw demo` starts it (src/cli/demo.ts): no exportLimitW, so the demo's own
  const d = await startDemo({
    port: 0,
    modbusPorts: 'auto',
    speed: opts.speed,
    quiet: true,
    dataDir: dir,
    start: NOON,
    sim,
  });
  running = { demo: d, dir };
  return d;
}

const metrics = async (d: Demo) =>
  (
    await (
      await fetch(`${d.url}/metrics`, { headers: { authorization: `Bearer ${await partnerToken(d.credentials)}` } })
    ).text()
  )
    .split('\n')
    .filter((l) => l.startsWith('sitegw_site_limit_watts{'));

describe('the demo holds an export limit', () => {
  it("its site.yaml with the limit is a valid config: limits.exportW, the tariff's negative prices curtailed", () => {
    const opts = { httpHost: '127.0.0.1', httpPort: 0, dataDir: '/tmp/x', pollSeconds: 10, batteryBlocks: 2 };
    const c = demoSiteConfig(ENDPOINTS, { ...opts, exportLimitW: DEMO_EXPORT_LIMIT_W });
    expect(c.limits.exportW).toBe(DEMO_EXPORT_LIMIT_W);
    expect(c.limits.negativeExportPrice).toBe('curtail');
    expect(demoSiteConfig(ENDPOINTS, opts).limits.exportW).toBeUndefined();
  });

  it('at a sunny noon with the battery full: the export held at the limit at the meter, in /metrics and on the status page', async () => {
    const d = await demo({ speed: 1, sunnyNoon: true });
    expect(d.daemon.ctx.config.limits.exportW).toBe(DEMO_EXPORT_LIMIT_W);
    const site = () => {
      d.sim.update(d.clock.now());
      return d.sim.snapshot();
    };
    // the PV could export well over the limit: the loop holds it there, curtailing the inverter
    expect(site().pvAvailableW.reduce((a, b) => a + b, 0) - site().houseW).toBeGreaterThan(DEMO_EXPORT_LIMIT_W + 1000);
    await waitFor(
      'the export held',
      () => Math.abs(-site().gridW - DEMO_EXPORT_LIMIT_W) < 100 && site().pvCurtailed,
      30_000,
    );
    const until = Date.now() + 5000;
    while (Date.now() < until) {
      const x = site();
      expect(-x.gridW).toBeLessThanOrEqual(DEMO_EXPORT_LIMIT_W + ONE_PCT);
      // never more than the limit needs
      expect(-x.gridW).toBeGreaterThan(DEMO_EXPORT_LIMIT_W - 3 * ONE_PCT);
      await new Promise((res) => setTimeout(res, 200));
    }
    expect(await metrics(d)).toContain(
      `sitegw_site_limit_watts{limit="exportW",source="site.yaml"} ${DEMO_EXPORT_LIMIT_W}`,
    );
    const login = await fetch(`${d.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(d.credentials.owner),
      redirect: 'manual',
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const status = (await (await fetch(`${d.url}/status.json`, { headers: { cookie } })).json()) as {
      limits: { inForce: { exportW: { watts: number; source: string } }; curtailedW: number };
    };
    expect(status.limits.inForce.exportW).toEqual({ watts: DEMO_EXPORT_LIMIT_W, source: 'site.yaml' });
    expect(status.limits.curtailedW).toBeGreaterThan(0);
  }, 90_000);

  it('a fast demo holds none: its one-second reads would be a busy loop', async () => {
    const d = await demo({ speed: 60 });
    expect(d.daemon.ctx.config.limits.exportW).toBeUndefined();
    expect(await metrics(d)).toEqual([]);
  }, 60_000);
});
