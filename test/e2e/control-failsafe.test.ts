/**
 * The fail-safe on the device side (docs/control.md "Fail-safe"): the gateway runs as its own
 * process (`sitegw run`) against the simulator in this process, forces a charge through SunSpec
 * 124, and is killed with SIGKILL. The simulated inverter must end the command by itself when its
 * revert timer (control.revertSeconds, 10 s here) runs out, and `sitegw control release` must end
 * it at once. What is checked is the inverter's own registers and battery window.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addClient } from '../../src/auth/clients.js';
import { ScaledClock } from '../../src/core/clock.js';
import { demoSiteYaml } from '../../src/demo/default-site.js';
import { M124 } from '../../src/profiles/sunspec-storage.js';
import type { InverterDevice } from '../../src/sim/device-images.js';
import { defaultSimConfig } from '../../src/sim/model.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { originalsOf, writesOf } from '../../src/store/control.js';
import { openDatabase } from '../../src/store/db.js';
import { basic, postForm } from '../support/auth.js';
import { waitFor } from '../support/demo.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const REVERT_S = 10;
const Q = 15 * 60_000;

let sim: SimSite;
let servers: SimServers;
let dir: string;
let configFile: string;
let secret: string;
let child: ChildProcess | undefined;

const inverter = () => sim.devices[0] as InverterDevice;
/** the inverter's model 124 register at `offset`, as a master would read it */
const reg124 = (offset: number) => {
  const bank = sim.unit('inverter', 1)!.holding[0]!;
  const m = inverter().image.model(124);
  return bank.read(m.address + offset, 1)[0]!;
};
/** the inverter's state now: its clock runs whether anyone polls it or not */
const forced = () => {
  sim.update(Date.now());
  return inverter().control.window(sim.time) !== null;
};

async function startGateway(): Promise<{ url: string; exited: Promise<unknown> }> {
  const c = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), 'run', '--config', configFile], {
    cwd: ROOT,
    env: { ...process.env, SITEGW_LOG_LEVEL: 'info' },
  });
  child = c;
  let out = '';
  c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  c.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise((r) => c.on('exit', r));
  const url = await waitFor('the gateway up', () => /"url":"(http:[^"]+)"/.exec(out)?.[1], 60_000);
  return { url, exited };
}

async function forceCharge(url: string): Promise<void> {
  const tok = await postForm(
    `${url}/oauth2/token`,
    { grant_type: 'client_credentials' },
    {
      authorization: basic('failsafe', secret),
    },
  );
  const token = tok.body.access_token as string;
  // the quarter hour in progress: the executor puts it on the device at once
  const now = Date.now();
  const start = Math.floor(now / Q) * Q;
  const res = await fetch(`${url}/api/v1/devices/inverter/plan`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      slots: [
        {
          interval: `${new Date(start).toISOString()}/${new Date(start + 2 * Q).toISOString()}`,
          mode: 'charge',
          powerW: 2000,
        },
      ],
    }),
  });
  expect(res.status).toBe(200);
  await waitFor('the charge on the inverter', () => forced() && reg124(M124.StorCtl_Mod) === 3, 30_000);
  // the timer is part of the command, never 0
  expect(reg124(M124.InOutWRte_RvrtTms)).toBe(REVERT_S);
  const w = sim.snapshot().battery.reduce((a, b) => a + b.w, 0);
  expect(w).toBeGreaterThan(1900);
}

async function kill(): Promise<void> {
  const c = child!;
  const gone = new Promise((r) => c.on('exit', r));
  c.kill('SIGKILL');
  await gone;
  child = undefined;
}

beforeAll(async () => {
  const clock = new ScaledClock(1);
  sim = new SimSite(defaultSimConfig(), clock.now());
  servers = await startSimServers(sim, clock, { host: '127.0.0.1' });
  dir = mkdtempSync(join(tmpdir(), 'sitegw-failsafe-'));
  const yaml = demoSiteYaml(servers, {
    httpHost: '127.0.0.1',
    httpPort: 0,
    dataDir: dir,
    pollSeconds: 1,
    batteryBlocks: 2,
  }).replace('control:\n  enabled: true', `control:\n  enabled: true\n  revertSeconds: ${REVERT_S}`);
  configFile = join(dir, 'site.yaml');
  writeFileSync(configFile, yaml);
  const db = openDatabase(join(dir, 'sitegw.db'));
  secret = (
    await addClient(
      db,
      { id: 'failsafe', scopes: ['svc/plan.write', 'svc/plan.read'], devices: ['inverter'] },
      Date.now(),
    )
  ).secret!;
  db.close();
});

afterAll(async () => {
  if (child) await kill();
  await servers?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SIGKILL during a forced charge', () => {
  it(`the inverter reverts to self-consumption by its own timer, ${REVERT_S} s after the last write`, async () => {
    const { url } = await startGateway();
    await forceCharge(url);
    await kill();
    const killedAt = Date.now();
    // bounded by the timer: at most revertSeconds after the kill (the last keep-alive was before it)
    await waitFor('the inverter back in self-consumption', () => !forced(), (REVERT_S + 10) * 1000);
    expect(reg124(M124.StorCtl_Mod)).toBe(0);
    // on the device's clock: the timer ran out at most revertSeconds after the kill
    expect(inverter().control.revertedAt! - killedAt).toBeLessThanOrEqual(REVERT_S * 1000);
  });

  it('`sitegw control release` (the unit’s ExecStopPost=) ends it at once', async () => {
    const { url } = await startGateway();
    await forceCharge(url);
    await kill();
    const killedAt = Date.now();
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'src/cli.ts'), 'control', 'release', '--config', configFile],
      { cwd: ROOT },
    );
    expect(stdout).toMatch(/inverter: self-consumption/);
    expect(forced()).toBe(false);
    expect(reg124(M124.StorCtl_Mod)).toBe(0);
    // and what the charge changed besides: grid charging back to the simulator's own PV only (0),
    // which the killed daemon could not restore; release's writes are audited as the daemon's are
    expect(reg124(M124.ChaGriSet)).toBe(0);
    const db = openDatabase(join(dir, 'sitegw.db'));
    try {
      const released = writesOf(db, 'inverter').filter((w) => w.writer === 'release');
      expect(released.map((w) => w.values)).toContainEqual([0]);
      for (const w of released) expect(w.readBack).toEqual(w.values);
      expect(originalsOf(db, 'inverter')).toEqual([]);
    } finally {
      db.close();
    }
    // release, not the timer, ended it: the timer's last end is the first test's
    expect(inverter().control.revertedAt ?? 0).toBeLessThan(killedAt);
  });
});
