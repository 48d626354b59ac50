/**
 * Site limits end to end (docs/limits.md): the gateway runs as its own process (`sitegw run`)
 * against the simulator in this process, over real Modbus TCP. The simulated hybrid inverter
 * offers SunSpec 704 (src/sim/power-limit.ts: its output follows the limit a second late, and
 * falls to the reversion values after its timer), the meter reads the house minus the output.
 * What is checked is the simulator's own physics: the grid meter's power, the inverter's
 * registers, the battery. A clear June noon in Berlin, a house without appliances switching
 * (a smooth load), so a sample over the limit is the loop's fault, not a kettle's.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { putLimitSchedule } from '../../src/limits/schedule.js';
import { openDatabase } from '../../src/store/db.js';
import { waitFor } from '../support/demo.js';
import {
  cleanRigs,
  commanded,
  exportW,
  fullBattery,
  inverter,
  kill,
  metric,
  NIGHT,
  NOON,
  now,
  ONE_PCT,
  Q,
  type Rig,
  rig,
  samples,
  simConfig,
  token,
} from '../support/limits-rig.js';

afterEach(cleanRigs);

describe('a fixed exportW, a scheduled slot, a silent meter and SIGKILL (SunSpec 704)', () => {
  it('holds the export at the meter, follows a 40 s slot of 0 W, goes to the fail-safe and stays there when killed', async () => {
    const r = await rig(
      simConfig(fullBattery),
      NOON,
      'limits:\n  exportW: 1000\n  failSafeW: 600\n  revertSeconds: 10\n',
    );
    // without a limit the site would export well over 3 kW now
    expect(now(r).pvAvailableW.reduce((a, b) => a + b, 0) - now(r).houseW).toBeGreaterThan(3000);
    // the fail-safe is in the reversion value from the start: 600 W of 6000 W, enabled, 10 s
    const m = inverter(r).image.model(704);
    await waitFor(
      'the fail-safe in WMaxLimPctRvrt',
      () =>
        m.point('WMaxLimPctRvrt').address > 0 && regs(r, m.point('WMaxLimPctRvrt').address, 4).join() === '1000,1,0,10',
      30_000,
    );

    // 1. the export held at 1000 W, not less than the limit needs
    await waitFor('the export held', () => Math.abs(exportW(r) - 1000) < 100, 30_000);
    const held = await samples(r, 8000);
    for (const s of held) expect(-s.gridW).toBeLessThanOrEqual(1000 + ONE_PCT);
    for (const s of held) expect(-s.gridW).toBeGreaterThan(1000 - 3 * ONE_PCT);
    expect(held.every((s) => s.pvCurtailed)).toBe(true);
    expect(await metric(r, 'sitegw_site_limit_watts{')).toContain(
      'sitegw_site_limit_watts{limit="exportW",source="site.yaml"} 1000',
    );
    // the cap the inverters are held at: the house plus the export, under what the PV could give
    const cap = Number((await metric(r, 'sitegw_site_generation_cap_watts '))[0]?.split(' ')[1]);
    const s = now(r);
    expect(cap).toBeGreaterThan(s.houseW + 1000 - 3 * ONE_PCT);
    expect(cap).toBeLessThan(s.pvAvailableW.reduce((a, b) => a + b, 0));

    // 2. a slot of 0 W for 40 s, starting at an arbitrary whole second, written through the store interface
    const start = Math.ceil((Date.now() + 6500) / 1000) * 1000 + 1000 * (Date.now() % 7);
    const db = openDatabase(join(r.dir, 'sitegw.db'));
    try {
      putLimitSchedule(
        db,
        [{ interval: `${new Date(start).toISOString()}/${new Date(start + 40_000).toISOString()}`, exportW: 0 }],
        'test',
        Date.now(),
      );
    } finally {
      db.close();
    }
    await waitFor('the slot begun', () => Date.now() >= start, 20_000);
    await waitFor('zero export', () => exportW(r) < ONE_PCT, 10_000);
    const zero = await samples(r, Math.max(0, start + 40_000 - Date.now() - 2000));
    expect(zero.length).toBeGreaterThan(10);
    for (const s of zero) expect(-s.gridW).toBeLessThanOrEqual(ONE_PCT);
    // after the slot: the site.yaml limit again, not the slot's
    await waitFor(
      '1000 W again after the slot',
      () => Date.now() > start + 40_000 && exportW(r) > 1000 - 3 * ONE_PCT,
      15_000,
    );

    // 3. a silent grid meter: the inverter at the fail-safe within a few seconds
    r.servers.faults.set('meter', 1, { kind: 'silent' });
    await waitFor(
      'the fail-safe on a silent meter',
      () => commanded(r) !== null && Math.abs(commanded(r)! - 600) < 10,
      15_000,
    );
    r.servers.faults.clear('meter', 1);
    await waitFor('held at the meter again', () => Math.abs(exportW(r) - 1000) < 100, 20_000);

    // 4. SIGKILL: the inverter falls to its reversion value (the fail-safe) by its own timer
    await kill(r);
    const killedAt = r.clock.now();

    await waitFor(
      'the 704 reversion',
      // the device's clock is asked first (commanded brings its timers to now): nobody polls it any more
      () => commanded(r) === 600 && (inverter(r).limit!.revertedAt ?? 0) > killedAt - 10_000,
      30_000,
    );
    // bounded by the timer: at most revertSeconds after the kill (the last write was before it)
    expect(inverter(r).limit!.revertedAt! - killedAt).toBeLessThanOrEqual(10_000);
    await new Promise((res) => setTimeout(res, 2000));
    expect(now(r).inverter.acW).toBeLessThanOrEqual(600 + 1);
  }, 240_000);
});

/** holding registers of the inverter's unit 1 as a master reads them */
/** A plan of one slot over the quarter hour in progress and the next (the executor acts at once). */
async function putSlot(r: Rig, mode: 'charge' | 'discharge', powerW: number): Promise<Response> {
  const start = Math.floor(Date.now() / Q) * Q;
  const interval = `${new Date(start).toISOString()}/${new Date(start + 2 * Q).toISOString()}`;
  return fetch(`${r.url}/api/v1/devices/inverter/plan`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${await token(r)}`, 'content-type': 'application/json' },
    body: JSON.stringify({ slots: [{ interval, mode, powerW }] }),
  });
}

/** The plan's first slot once its status is `limited`. */
function limitedSlot(r: Rig): Promise<{ status: string; note?: string }> {
  return waitFor(
    'the slot limited',
    async () => {
      const p = await fetch(`${r.url}/api/v1/devices/inverter/plan`, {
        headers: { authorization: `Bearer ${await token(r)}` },
      });
      const body = (await p.json()) as { slots: { status: string; note?: string }[] };
      return body.slots[0]?.status === 'limited' ? body.slots[0] : undefined;
    },
    20_000,
  );
}

function regs(r: Rig, address: number, n: number): number[] {
  return r.sim.unit('inverter', 1)!.holding[0]!.read(address, n);
}

describe('a negative export price, with the battery first', () => {
  it('exports nothing while the export price is below 0; the battery charges at its most before PV is curtailed', async () => {
    const r = await rig(
      simConfig((c) => {
        // a battery that cannot take the whole surplus: 2 x 1000 W
        for (const b of c.battery.blocks) b.maxChargeW = 1000;
      }),
      NOON,
      'limits:\n  negativeExportPrice: curtail\n',
      // the demo's time-of-use tariff replaced by a flat one with a negative export price
      (y) => y.replace(/tariff:\n(?: {2}.*\n)+/, 'tariff:\n  type: flat\n  importPrice: 0.3\n  exportPrice: -0.05\n'),
    );
    await waitFor('zero export', () => exportW(r) < ONE_PCT && now(r).pvCurtailed, 30_000);
    const s = await samples(r, 8000);
    for (const x of s) {
      expect(-x.gridW).toBeLessThanOrEqual(ONE_PCT);
      const battery = x.battery.reduce((a, b) => a + b.w, 0);
      // PV is curtailed only with the battery at its most (2000 W DC)
      if (x.pvCurtailed) expect(battery).toBeGreaterThan(1990);
      // and no more than the house and the battery need: all the PV they take is used
      const pv = x.pvW.reduce((a, b) => a + b, 0);
      expect(pv).toBeGreaterThan(battery + x.houseW - 3 * ONE_PCT);
    }
    expect(await metric(r, 'sitegw_site_limit_watts{')).toContain(
      'sitegw_site_limit_watts{limit="exportW",source="price"} 0',
    );
  }, 120_000);
});

describe('an import limit', () => {
  it('sheds a planned charge first and says so in the slot', async () => {
    const r = await rig(
      simConfig(() => undefined),
      NIGHT,
      'limits:\n  importW: 2500\n',
    );
    // the quarter hour in progress and the next: the executor puts the charge on the device at once
    expect((await putSlot(r, 'charge', 3000)).status).toBe(200);
    const battery = () => now(r).battery.reduce((a, b) => a + b.w, 0);
    // night: no PV, the house on the grid; 3000 W of charge would import well over 2500 W
    await waitFor('the battery charging', () => battery() > 1000, 30_000);
    expect(now(r).pvW.reduce((a, b) => a + b, 0)).toBe(0);
    expect(now(r).houseW + 3000).toBeGreaterThan(2500 + 500);
    const s = await samples(r, 6000);
    for (const x of s) {
      expect(x.gridW).toBeLessThanOrEqual(2500);
      // shed, not stopped: what fits under the limit still charges
      expect(x.battery.reduce((a, b) => a + b.w, 0)).toBeGreaterThan(2500 - 125 - x.houseW - 200);
    }
    const plan = await limitedSlot(r);
    expect(plan.note).toMatch(/grid import kept under limits.importW \(site.yaml\) 2500 W/);
  }, 120_000);
});

describe('an export limit and a planned discharge', () => {
  it('clips the discharge to the export limit in force and says so in the slot', async () => {
    const r = await rig(simConfig(fullBattery), NOON, 'limits:\n  exportW: 1000\n');
    await waitFor('the export held', () => Math.abs(exportW(r) - 1000) < 100, 30_000);
    expect((await putSlot(r, 'discharge', 3000)).status).toBe(200);
    const slot = await limitedSlot(r);
    expect(slot.note).toMatch(/grid export kept under limits.exportW \(site.yaml\) 1000 W/);
    // the site already exports its 1000 W from PV: the battery gives nothing to the grid
    for (const x of await samples(r, 5000)) {
      expect(-x.gridW).toBeLessThanOrEqual(1000 + ONE_PCT);
      expect(x.battery.reduce((a, b) => a + b.w, 0)).toBeGreaterThan(-200);
    }
  }, 120_000);
});

describe('a clean stop', () => {
  it('leaves the inverter at the fail-safe (default exportW), not unlimited', async () => {
    const r = await rig(simConfig(fullBattery), NOON, 'limits:\n  exportW: 1500\n');
    await waitFor('the export held', () => Math.abs(exportW(r) - 1500) < 100, 30_000);
    const exited = new Promise((res) => r.child.on('exit', res));
    r.child.kill('SIGTERM');
    await exited;
    // at once, not after the device's revert timer (60 s): the stop wrote it
    expect(commanded(r)).toBe(1500);
    await new Promise((res) => setTimeout(res, 2000));
    expect(now(r).inverter.acW).toBeLessThanOrEqual(1500 + 1);
  }, 120_000);
});
