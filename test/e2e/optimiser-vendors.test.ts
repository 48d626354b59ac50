/**
 * `operationMode: optimise` on storage systems whose control gives no hold (Huawei SUN2000 +
 * LUNA2000, Victron GX: docs/control.md "Vendor control maps"), through the daemon. The optimum
 * holds the battery for most of the day (the tariff below), and a hold is what these devices
 * refuse (SLOT_MODE_UNSUPPORTED): the loop must send self-consumption there (docs/optimiser.md
 * "Devices without hold"), so the plan is stored, its charge reaches the fixture device (written
 * from the vendor's register document, test/fixtures/control/) as the document's writes, and the
 * next slot puts the device back in its own self-consumption. Before the mapping the loop's plan
 * was refused whole and the battery stayed unplanned, with a health problem.
 *
 * The battery blocks and the grid meter are the simulator's (SunSpec); the control registers the
 * fixture devices' own. No history: the forecasts are 0, so only the tariff moves the battery.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScaledClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/log.js';
import { streamIds } from '../../src/core/streams.js';
import { ensureDemoCredentials } from '../../src/demo/credentials.js';
import { Daemon } from '../../src/main.js';
import { defaultSimConfig } from '../../src/sim/config.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { writesOf } from '../../src/store/control.js';
import { customerTokens, partnerToken } from '../support/auth.js';
import { type ControlDevice, loadControlFixture, startControlDevice } from '../support/control-device.js';
import { getJson, waitFor } from '../support/demo.js';
import { fixtureSiteConfig } from '../support/fixture-site.js';

const VENDORS = ['huawei-sun2000', 'victron-gx'] as const;
// 01:01 in Berlin on a winter Thursday
const START = Date.parse('2026-01-15T00:01:00Z');
const SPEED = 120;

/**
 * The first quarter hour of every hour cheap, dearer by 0.01 each hour from midnight (no two
 * alike, so the optimum has no ties), the rest dear with nothing paid for export but in the
 * evening: whenever the first plan is made, a charge comes within the hour and a held quarter hour
 * right after it, so the test does not hang on how soon the daemon plans.
 */
function hourlyCheapQuarter() {
  const hh = (h: number) => `${String(h).padStart(2, '0')}`;
  return Array.from({ length: 24 }, (_, h) => [
    { from: `${hh(h)}:00`, to: `${hh(h)}:15`, importPrice: 0.05 + 0.01 * h, exportPrice: 0 },
    {
      from: `${hh(h)}:15`,
      to: h === 23 ? '24:00' : `${hh(h + 1)}:00`,
      importPrice: 0.6,
      exportPrice: h >= 17 && h < 20 ? 0.4 : 0,
    },
  ]).flat();
}

interface PlanBody {
  source: string;
  slots: { interval: string; mode: string; powerW?: number; status: string }[];
}

describe('optimise on devices without hold: holds sent as self-consumption, the plan runs', () => {
  const devices = new Map<string, ControlDevice>();
  let daemon: Daemon;
  let servers: SimServers;
  let owner: string;
  let partner: string;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sitegw-optimiser-vendors-'));
    const clock = new ScaledClock(SPEED, START);
    const sim = new SimSite(defaultSimConfig(), clock.now());
    servers = await startSimServers(sim, clock, { host: '127.0.0.1' });
    const entries: object[] = [];
    for (const [j, v] of VENDORS.entries()) {
      const f = loadControlFixture(v);
      const d = await startControlDevice(f);
      devices.set(v, d);
      entries.push(
        {
          id: `inv-${v}`,
          role: 'inverter',
          profile: f.profile,
          connection: { type: 'tcp', host: d.host, port: d.port, unitId: f.unitId },
        },
        {
          id: `bat-${v}`,
          role: 'battery',
          profile: 'sunspec',
          inverter: `inv-${v}`,
          connection: { type: 'tcp', host: servers.inverter.host, port: servers.inverter.port, unitId: j + 2 },
        },
      );
    }
    entries.push({
      id: 'grid-meter',
      role: 'grid-meter',
      profile: 'sunspec',
      connection: { type: 'tcp', host: servers.meter.host, port: servers.meter.port, unitId: 1 },
    });
    const config = fixtureSiteConfig({
      id: 'optimiser-vendors',
      name: 'Vendor fixtures without hold, optimised',
      dataDir,
      devices: entries,
      more: {
        poll: { intervalSeconds: 5 },
        // the fixtures' charge step is 2,000 W: the optimum charges at full power in the cheapest
        // quarter hours ahead (a 5 kWh block at 50 % has room for about four), holds between them
        // (import dear, export worth nothing, no load forecast yet) and sells into the evening
        control: { enabled: true, maxChargeW: 2000 },
        tariff: { type: 'time-of-use', periods: hourlyCheapQuarter() },
      },
    });
    daemon = await Daemon.start({ config, clock, log: silentLogger() });
    const credentials = await ensureDemoCredentials(daemon);
    owner = (await customerTokens(credentials, 'svc/device.read svc/device.write')).access_token;
    partner = await partnerToken(credentials);
  });
  afterAll(async () => {
    await daemon?.stop();
    for (const d of devices.values()) await d.close();
    await servers?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** the optimiser's first plan per vendor, and the device's writes before it */
  const first = new Map<string, { plan: PlanBody; before: number }>();
  beforeAll(async () => {
    // both in optimise before the cheap quarter hours end: each planned as soon as its state of charge is read
    await Promise.all(
      VENDORS.map(async (v) => {
        const id = `inv-${v}`;
        await new Promise<void>((resolve) => {
          const off = daemon.ctx.bus.on('reading', (r) => {
            if (r.streamId !== streamIds.batteryAggregate(id) || r.values.soc === undefined) return;
            off();
            resolve();
          });
        });
        const before = devices.get(v)!.writes.length;
        const patch = await fetch(`${daemon.url}/api/v1/devices/${id}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
          body: JSON.stringify({ operationMode: 'optimise' }),
        });
        expect(patch.status).toBe(200);
        const plan = await waitFor('the optimiser’s plan stored', async () => {
          const g = await getJson(`${daemon.url}/api/v1/devices/${id}/plan`, partner);
          return g.status === 200 && (g.body as PlanBody).source === 'optimiser' ? (g.body as PlanBody) : undefined;
        });
        first.set(v, { plan, before });
      }),
    );
  });

  it.each(VENDORS)('%s', async (v) => {
    const id = `inv-${v}`;
    const device = devices.get(v)!;
    const f = loadControlFixture(v);
    const { plan, before } = first.get(v)!;
    const modes = plan.slots.map((s) => s.mode);
    expect(modes).not.toContain('hold');
    // a dear quarter hour of the day: what the optimum holds, sent as self-consumption
    const midday = plan.slots.find((s) => s.interval.startsWith('2026-01-15T10:30:00'))!;
    expect(midday.mode).toBe('self-consumption');
    // the first charge comes in the cheapest quarter hour ahead: full power
    expect(plan.slots.find((s) => s.mode === 'charge')).toMatchObject({ powerW: 2000 });
    expect(modes).toContain('discharge');

    // the first charge slot as the document writes it, by the optimiser (within the site hour: 30 s here)
    const charge = f.steps.find((s) => s.command.mode === 'charge' && s.command.powerW === 2000)!;
    await waitFor(
      'the charge written',
      () => device.writes.length >= before + charge.writes.length || undefined,
      60_000,
    );
    expect(
      device.writes.slice(before, before + charge.writes.length).map(({ address, words }) => ({ address, words })),
    ).toEqual(charge.writes);
    // the held quarter hour after it: the device's own self-consumption, as the document writes it
    const self = f.steps.find((s) => s.command.mode === 'self-consumption')!.writes;
    await waitFor(
      'self-consumption written after the charge',
      () =>
        device.writes
          .slice(before + charge.writes.length)
          .some((w) => self.some((s) => s.address === w.address && s.words.join() === w.words.join())) || undefined,
      60_000,
    );
    const audit = writesOf(daemon.ctx.db, id);
    expect(audit.some((w) => w.writer === 'optimiser')).toBe(true);
    for (const w of audit) expect(w.readBack).toEqual(w.values);
    const after = (await getJson(`${daemon.url}/api/v1/devices/${id}/plan`, partner)).body as PlanBody;
    expect(after.slots.filter((s) => s.status === 'failed')).toEqual([]);
    expect((await getJson(`${daemon.url}/healthz`)).body.problems ?? []).not.toContain(
      expect.stringMatching(/optimiser/),
    );
  });
});
