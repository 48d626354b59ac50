/**
 * Each vendor's control map through the daemon (docs/control.md "Vendor control maps"): a site
 * whose inverters use the vendor profiles on fixture devices written from the vendors' register
 * documents (test/fixtures/control/). A plan's `hold` slot reaches each device; after `DELETE` of
 * the plan the device gets its self-consumption writes and then no more, keep-alive or not.
 *
 * GoodWe ET, Sungrow SH and SolarEdge StorEdge are run here: hold needs no measurement. The
 * SolarEdge inverter is `profile: sunspec` (no model 124); its StorEdge battery's profile carries
 * the control map, written at the inverter's unit on the same link (docs/control.md "SolarEdge
 * StorEdge"). Huawei and Victron have no
 * hold in their maps; test/e2e/control-vendors-move.test.ts runs them with a charge slot, with
 * the simulator's batteries and grid meter giving the readings a charge waits for.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScaledClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/log.js';
import { ensureDemoCredentials } from '../../src/demo/credentials.js';
import { Daemon } from '../../src/main.js';
import { writesOf } from '../../src/store/control.js';
import { partnerToken } from '../support/auth.js';
import { type ControlDevice, loadControlFixture, startControlDevice } from '../support/control-device.js';
import { waitFor } from '../support/demo.js';
import { fixtureSiteConfig } from '../support/fixture-site.js';

const VENDORS = ['goodwe-et', 'sungrow-sh-rt', 'solaredge-storedge'] as const;
/** the inverter's own profile where the control map is its battery's (SolarEdge: SunSpec beside StorEdge) */
const INVERTER_PROFILE: Partial<Record<string, string>> = { 'solaredge-storedge': 'sunspec' };
const Q = 15 * 60_000;
const START = Date.parse('2026-06-21T10:00:00Z') + 60_000;
const SPEED = 120;

describe('vendor control maps through the daemon: writes stop after DELETE of the plan', () => {
  const devices = new Map<string, ControlDevice>();
  let daemon: Daemon;
  let token: string;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sitegw-vendors-'));
    const entries = [];
    for (const v of VENDORS) {
      const f = loadControlFixture(v);
      const d = await startControlDevice(f);
      devices.set(v, d);
      const connection = { type: 'tcp', host: d.host, port: d.port, unitId: f.unitId };
      entries.push(
        { id: `inv-${v}`, role: 'inverter', profile: INVERTER_PROFILE[v] ?? f.profile, connection },
        { id: `bat-${v}`, role: 'battery', profile: f.profile, inverter: `inv-${v}`, connection },
      );
    }
    const config = fixtureSiteConfig({
      id: 'vendors',
      name: 'Vendor fixtures',
      dataDir,
      more: { control: { enabled: true } },
      devices: entries,
    });
    daemon = await Daemon.start({ config, clock: new ScaledClock(SPEED, START), log: silentLogger() });
    token = await partnerToken(await ensureDemoCredentials(daemon));
  });
  afterAll(async () => {
    await daemon?.stop();
    for (const d of devices.values()) await d.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it.each(VENDORS)('%s: the hold slot is written, and after DELETE self-consumption, then nothing', async (v) => {
    const device = devices.get(v)!;
    const f = loadControlFixture(v);
    const url = `${daemon.url}/api/v1/devices/inv-${v}/plan`;
    const start = Math.floor(daemon.ctx.clock.now() / Q) * Q;
    const fresh = device.writes.length;
    const put = await fetch(url, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        slots: [
          { interval: `${new Date(start).toISOString()}/${new Date(start + 4 * Q).toISOString()}`, mode: 'hold' },
        ],
      }),
    });
    expect(put.status, await put.clone().text()).toBe(200);
    // the hold as the document prescribes it, on the device and in the audit under the plan's writer
    const hold = f.steps.find((s) => s.command.mode === 'hold')!;
    const audit = () => writesOf(daemon.ctx.db, `inv-${v}`);
    await waitFor('the hold written', () => audit().some((w) => w.writer.startsWith('partner:')) || undefined);
    for (const w of hold.writes) expect(device.words(w.address, w.words.length)).toEqual(w.words);
    if (v === 'solaredge-storedge') {
      // from the factory state, exactly the document's order: remote control, the default mode the
      // timeout returns to, the timeout, then command mode off (the charge step's preamble, without
      // its limit and command, and the hold step's command)
      const charge = f.steps.find((s) => s.command.mode === 'charge')!;
      const preamble = charge.writes.filter((w) => w.address !== 0xe00e && w.address !== 0xe00d);
      const expected = [...preamble, ...hold.writes];
      expect(
        device.writes.slice(fresh, fresh + expected.length).map((w) => ({ address: w.address, words: w.words })),
      ).toEqual(expected);
      expect(device.writes.every((w) => w.unitId === f.unitId)).toBe(true);
    }

    const deletedAt = daemon.ctx.clock.now();
    const del = await fetch(url, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    expect(del.status).toBe(204);
    // no slot any more: the executor writes the device's self-consumption, as the document gives it
    // (a keep-alive of the hold already under way ends first: the executor runs one step at a time)
    const released = () => {
      // the rows since the DELETE, oldest first; DELETE leaves the mode plan for
      // self-consumption, and the writer names the mode
      const rows = audit()
        .filter((w) => w.atMs >= deletedAt)
        .sort((a, b) => a.atMs - b.atMs);
      const i = rows.findIndex((w) => w.writer === 'mode:self-consumption');
      return i < 0 ? undefined : rows.slice(i);
    };
    const rows = await waitFor('self-consumption written', released);
    const selfWrites = f.steps.filter((s) => s.command.mode === 'self-consumption').flatMap((s) => s.writes);
    for (const w of rows) {
      expect(w.writer).toBe('mode:self-consumption');
      expect(selfWrites).toContainEqual({ address: w.address, words: w.values });
    }
    const after = device.writes.length;
    // the keep-alive of a command in force comes every third of its life (GoodWe 30 s, Sungrow
    // 60 s): 90 s on the daemon's clock hold several, and after self-consumption not one write more
    const until = daemon.ctx.clock.now() + 90_000;
    await waitFor('90 site seconds', () => daemon.ctx.clock.now() > until || undefined);
    expect(device.writes.slice(after)).toEqual([]);
  });
});
