/**
 * Site limits held through a vendor's `limit:` map, not SunSpec (docs/limits-vendors.md): the
 * gateway (`sitegw run`, its own process) sees the simulated inverter only as a Huawei SUN2000
 * (src/sim/huawei-sun2000.ts: Huawei's registers at their own unit over real Modbus TCP, its output
 * following 40125 "Active power percentage derating" a second late) and limits it through the
 * profile's output map. The SunSpec image offers no limit here (no 123, no 704), so an export held
 * at the meter is the Huawei map's doing. Checked on the simulator's own physics and registers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { HuaweiSun2000Device } from '../../src/sim/huawei-sun2000.js';
import { waitFor } from '../support/demo.js';
import {
  cleanRigs,
  exportW,
  fullBattery,
  metric,
  NOON,
  now,
  ONE_PCT,
  RATED,
  type Rig,
  rig,
  samples,
  simConfig,
  statusPage,
} from '../support/limits-rig.js';

afterEach(cleanRigs);

const UNIT = 9;
const SUNGROW_UNIT = 10;

/** the demo site with its inverter read through `profile` at `unit` and no battery devices */
function asVendor(profile: string, unit: number) {
  return (yaml: string): string =>
    yaml
      .replace(
        /(- id: inverter\n(?: {4}.*\n)*? {4})profile: sunspec\n( {4}connection: \{[^}]*unitId: )1 \}/,
        `$1profile: ${profile}\n$2${unit} }`,
      )
      .replace(/ {2}- id: battery-\d+\n(?: {4}.*\n?)+/g, '');
}
const asHuawei = asVendor('huawei-sun2000', UNIT);

const huawei = (r: Rig) => r.sim.devices.find((d) => d.identity.unitId === UNIT) as HuaweiSun2000Device;

describe('an export limit held through a Huawei SUN2000 limit map', () => {
  it('holds the export at the meter with 40125, names the unknown revert, and leaves the fail-safe on a stop', async () => {
    const r = await rig(
      simConfig((c) => {
        fullBattery(c);
        c.inverter.limitModels = [];
        c.huaweiUnitId = UNIT;
      }),
      NOON,
      'limits:\n  exportW: 1000\n',
      (y) => {
        const out = asHuawei(y);
        expect(out).toContain(`profile: huawei-sun2000`);
        expect(out).not.toContain('battery-1');
        return out;
      },
    );
    // without a limit the site would export well over 3 kW now, and nothing but 40125 can cut it
    expect(now(r).pvAvailableW.reduce((a, b) => a + b, 0) - now(r).houseW).toBeGreaterThan(3000);
    expect(huawei(r).derating).toBe(1000);

    await waitFor('the export held', () => Math.abs(exportW(r) - 1000) < 100, 30_000);
    const held = await samples(r, 8000);
    for (const s of held) expect(-s.gridW).toBeLessThanOrEqual(1000 + ONE_PCT);
    for (const s of held) expect(-s.gridW).toBeGreaterThan(1000 - 3 * ONE_PCT);
    expect(held.every((s) => s.pvCurtailed)).toBe(true);
    // the output the derating allows is what the inverter delivers: 0.1 % of P_max (RATED)
    const s = now(r);
    expect(huawei(r).derating).toBeLessThan(1000);
    expect(s.inverter.acW).toBeLessThanOrEqual((huawei(r).derating / 1000) * RATED + 1);
    expect(await metric(r, 'sitegw_site_limit_watts{')).toContain(
      'sitegw_site_limit_watts{limit="exportW",source="site.yaml"} 1000',
    );
    // everywhere a user looks: the limit in force, the cap and the curtailed power (an upper
    // bound: the rating less the cap, at least what the simulated PV really lost)
    const lost = s.pvAvailableW.reduce((a, b) => a + b, 0) - s.pvW.reduce((a, b) => a + b, 0);
    expect(lost).toBeGreaterThan(500);
    const curtailed = Number((await metric(r, 'sitegw_site_curtailed_watts '))[0]?.split(' ')[1]);
    expect(curtailed).toBeGreaterThanOrEqual(lost - 3 * ONE_PCT);
    expect(curtailed).toBeLessThanOrEqual(RATED - s.houseW - 1000 + 3 * ONE_PCT);
    const page = await statusPage(r);
    expect(page.json.limits).toMatchObject({
      inForce: { exportW: { watts: 1000, source: 'site.yaml' } },
      binding: 'exportW',
      failSafe: false,
    });
    expect(page.json.limits.curtailedW).toBeGreaterThanOrEqual(lost - 3 * ONE_PCT);
    expect(page.html).toContain('<h2>Site limits</h2>');
    expect(page.html).toMatch(/<td>Export<\/td><td>1\.00 kW<\/td><td>site\.yaml<\/td>/);
    expect(page.html).toMatch(/Inverters held at [\d.]+ kW · curtailed: up to [\d.]+ (k)?W/);

    // no source says what a SUN2000 does with 40125 once the gateway is gone: the log says so
    expect(r.out()).toMatch(/does not stay at the fail-safe when the gateway is gone/);

    // a clean stop leaves the fail-safe (exportW, 1000 W of 6000 W: 166 in 0.1 %), not unlimited
    const exited = new Promise((res) => r.child.on('exit', res));
    r.child.kill('SIGTERM');
    await exited;
    expect(huawei(r).derating).toBe(Math.floor((1000 / RATED) * 1000));
  }, 120_000);
});

describe('an export limit held through a Sungrow SH device export limit map', () => {
  it('writes the export limit in force to the feed-in limitation, which holds it at the meter', async () => {
    const r = await rig(
      simConfig((c) => {
        fullBattery(c);
        c.inverter.limitModels = [];
        c.sungrowUnitId = SUNGROW_UNIT;
      }),
      NOON,
      'limits:\n  exportW: 1000\n',
      (y) => {
        const out = asVendor('sungrow-sh-rt', SUNGROW_UNIT)(y);
        expect(out).toContain('profile: sungrow-sh-rt');
        return out;
      },
    );
    expect(now(r).pvAvailableW.reduce((a, b) => a + b, 0) - now(r).houseW).toBeGreaterThan(3000);
    const feedIn = () => r.sim.unit('inverter', SUNGROW_UNIT)!.holding[1]!;
    // 13074 (wire 13073) the limit in W, 13087 (wire 13086) 0xAA: the document's numbers minus one
    await waitFor('the feed-in limitation on', () => feedIn().read(13086, 1)[0] === 0xaa, 30_000);
    expect(feedIn().read(13073, 1)[0]).toBe(1000);
    await waitFor('the export held', () => Math.abs(exportW(r) - 1000) < 100, 30_000);
    const held = await samples(r, 8000);
    for (const s of held) expect(-s.gridW).toBeLessThanOrEqual(1000 + ONE_PCT);
    for (const s of held) expect(-s.gridW).toBeGreaterThan(1000 - 3 * ONE_PCT);
    expect(held.every((s) => s.pvCurtailed)).toBe(true);

    // a clean stop leaves the fail-safe (exportW) whole as the feed-in limit, switched on
    feedIn().write(13073, [0]);
    const exited = new Promise((res) => r.child.on('exit', res));
    r.child.kill('SIGTERM');
    await exited;
    expect(feedIn().read(13073, 1)[0]).toBe(1000);
    expect(feedIn().read(13086, 1)[0]).toBe(0xaa);
  }, 120_000);
});
