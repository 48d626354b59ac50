/**
 * `sitegw control release` puts back everything control changed (docs/control.md "Fail-safe"):
 * a SolarEdge inverter with a StorEdge battery (the fixture device built from the register
 * document, test/fixtures/control/solaredge-storedge.yaml) is put in remote control by a plan's
 * hold; after the daemon stops, release writes the storage control mode, the default mode and the
 * command timeout back to the values the inverter held before the gateway first wrote them, in
 * that order, audits each write as the daemon does, and a second release writes nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlCommand } from '../../src/cli/control.js';
import { ScaledClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/log.js';
import { ensureDemoCredentials } from '../../src/demo/credentials.js';
import { Daemon } from '../../src/main.js';
import { originalsOf, writesOf } from '../../src/store/control.js';
import { openDatabase } from '../../src/store/db.js';
import { partnerToken } from '../support/auth.js';
import { type ControlDevice, loadControlFixture, startControlDevice } from '../support/control-device.js';
import { waitFor } from '../support/demo.js';
import { type FixtureSite, fixtureSiteConfig, fixtureSiteYaml } from '../support/fixture-site.js';
import { captureLines } from '../support/output.js';

const Q = 15 * 60_000;
const START = Date.parse('2026-06-21T10:00:00Z') + 60_000;

describe('control release restores what the plan changed', () => {
  const f = loadControlFixture('solaredge-storedge');
  let device: ControlDevice;
  let dataDir: string;
  let configFile: string;
  let site: FixtureSite;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sitegw-release-'));
    device = await startControlDevice(f);
    const connection = { type: 'tcp', host: device.host, port: device.port, unitId: f.unitId };
    site = {
      id: 'release',
      name: 'Release',
      dataDir,
      devices: [
        { id: 'inverter', role: 'inverter', profile: 'sunspec', connection },
        { id: 'battery', role: 'battery', profile: f.profile, inverter: 'inverter', connection },
      ],
      more: { control: { enabled: true } },
    };
    configFile = join(dataDir, 'site.yaml');
    writeFileSync(configFile, fixtureSiteYaml(site));
  });
  afterAll(async () => {
    await device?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('puts back the settings in the order first written, audits them, and has nothing left the second time', async () => {
    const factory = (address: number) => f.registers.find((r) => r.address === address)!.words;
    const daemon = await Daemon.start({
      config: fixtureSiteConfig(site),
      clock: new ScaledClock(120, START),
      log: silentLogger(),
    });
    try {
      const token = await partnerToken(await ensureDemoCredentials(daemon));
      const start = Math.floor(daemon.ctx.clock.now() / Q) * Q;
      const put = await fetch(`${daemon.url}/api/v1/devices/inverter/plan`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          slots: [
            { interval: `${new Date(start).toISOString()}/${new Date(start + 2 * Q).toISOString()}`, mode: 'hold' },
          ],
        }),
      });
      expect(put.status).toBe(200);
      await waitFor('remote control', () => device.words(0xe004, 1)[0] === 4 && device.words(0xe00d, 1)[0] === 0);
    } finally {
      // a clean stop writes self-consumption (command mode 7) and leaves the settings as they are
      await daemon.stop();
    }
    expect(device.words(0xe004, 1)).toEqual([4]);
    expect(device.words(0xe00a, 1)).toEqual([7]);
    expect(device.words(0xe00b, 2)).toEqual([60, 0]);
    expect(device.words(0xe00d, 1)).toEqual([7]);

    const before = device.writes.length;
    const io = captureLines();
    expect(await controlCommand(['release', '--config', configFile], io)).toBe(0);
    expect(io.stdout.join('')).toMatch(/^inverter: self-consumption \(.*\(restored\)/);
    // the three settings as the inverter held them, in the order the gateway first wrote them;
    // the command mode stays at self-consumption (7), which is what release is for
    const restored = [0xe004, 0xe00a, 0xe00b].map((address) => ({ address, words: factory(address) }));
    expect(device.writes.slice(before).map((w) => ({ address: w.address, words: w.words }))).toEqual(restored);
    expect(device.words(0xe00d, 1)).toEqual([7]);

    const db = openDatabase(join(dataDir, 'sitegw.db'));
    try {
      const audit = writesOf(db, 'inverter').filter((w) => w.writer === 'release');
      expect(audit.map((w) => ({ address: w.address, words: w.values }))).toEqual(restored);
      for (const w of audit) expect(w.readBack).toEqual(w.values);
      expect(originalsOf(db, 'inverter')).toEqual([]);
    } finally {
      db.close();
    }

    const again = device.writes.length;
    expect(await controlCommand(['release', '--config', configFile], captureLines())).toBe(0);
    expect(device.writes.slice(again)).toEqual([]);
  });
});
