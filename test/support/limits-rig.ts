/**
 * The rig of the site-limits end-to-end tests (test/e2e/limits.test.ts, test/e2e/gridop-limits.test.ts):
 * the simulator in this process and the gateway as its own process (`sitegw run`) on it, over real
 * Modbus TCP, with what the tests read of the simulated site.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addClient } from '../../src/auth/clients.js';
import { setOwnerPassword } from '../../src/auth/owner.js';
import { ScaledClock } from '../../src/core/clock.js';
import { demoSiteYaml } from '../../src/demo/default-site.js';
import type { InverterDevice } from '../../src/sim/device-images.js';
import { defaultSimConfig, type SimConfig } from '../../src/sim/model.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { openDatabase } from '../../src/store/db.js';
import { basic, postForm } from './auth.js';
import { waitFor } from './demo.js';

const ROOT = new URL('../../', import.meta.url).pathname;
export const RATED = 6000;
/** the overshoot the issue allows: 1 % of the inverters' rating */
export const ONE_PCT = 0.01 * RATED;
export const NOON = Date.parse('2026-06-21T10:30:00Z');
export const NIGHT = Date.parse('2026-06-21T23:00:00Z');
export const Q = 15 * 60_000;

/** the site owner, for the status page */
export const OWNER = { username: 'owner', password: 'limits-owner-password' };

export interface Rig {
  sim: SimSite;
  clock: ScaledClock;
  servers: SimServers;
  dir: string;
  child: ChildProcess;
  url: string;
  out: () => string;
  /** an API client granted the inverter: device.read, plan.read, plan.write */
  secret: string;
}
const rigs: Rig[] = [];

export function simConfig(change: (c: SimConfig) => void): SimConfig {
  const c = defaultSimConfig();
  c.weather.cloudiness = 0;
  c.house.applianceRate = 0;
  c.inverter.limitModels = [704];
  change(c);
  return c;
}

/** the simulator at `start` (its clock runs at real speed from there) and the gateway on it */
export async function rig(cfg: SimConfig, start: number, yamlTail: string, edit: (yaml: string) => string = (y) => y) {
  const clock = new ScaledClock(1, start);
  const sim = new SimSite(cfg, clock.now());
  const servers = await startSimServers(sim, clock, { host: '127.0.0.1' });
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-limits-'));
  const yaml = `${edit(
    demoSiteYaml(servers, {
      httpHost: '127.0.0.1',
      httpPort: 0,
      dataDir: dir,
      pollSeconds: 5,
      batteryBlocks: cfg.battery.blocks.length,
    }),
  )}\n${yamlTail}`;
  writeFileSync(join(dir, 'site.yaml'), yaml);
  const db = openDatabase(join(dir, 'sitegw.db'));
  const scopes = ['svc/device.read', 'svc/plan.read', 'svc/plan.write'];
  const secret = (await addClient(db, { id: 'limits', scopes, devices: ['inverter'] }, Date.now())).secret!;
  await setOwnerPassword(db, OWNER.username, OWNER.password, Date.now());
  db.close();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'src/cli.ts'), 'run', '--config', join(dir, 'site.yaml')],
    { cwd: ROOT, env: { ...process.env, SITEGW_LOG_LEVEL: 'info' } },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const r: Rig = { sim, clock, servers, dir, child, url: '', out: () => out, secret };
  rigs.push(r);
  r.url = await waitFor('the gateway up', () => /"url":"(http:[^"]+)"/.exec(out)?.[1], 60_000);
  return r;
}

export async function kill(r: Rig): Promise<void> {
  if (r.child.exitCode !== null || r.child.signalCode !== null) return;
  const gone = new Promise((res) => r.child.on('exit', res));
  r.child.kill('SIGKILL');
  await gone;
}

/** kills every rig's gateway and closes its simulator: each file's afterEach */
export async function cleanRigs(): Promise<void> {
  for (const r of rigs.splice(0)) {
    await kill(r);
    await r.servers.close();
    rmSync(r.dir, { recursive: true, force: true });
  }
}

/** the simulated site now, on its own clock */
export function now(r: Rig) {
  r.sim.update(r.clock.now());
  return r.sim.snapshot();
}
export const exportW = (r: Rig) => -now(r).gridW;
export const inverter = (r: Rig) => r.sim.devices[0] as InverterDevice;
/** the output limit the inverter's 704 registers ask for now, W (null: none) */
export const commanded = (r: Rig) => inverter(r).limit!.commandedW(r.clock.now());

/** samples the site every 200 ms for `ms` (real time), after waiting for `settled` */
export async function samples(r: Rig, ms: number) {
  const out: ReturnType<typeof now>[] = [];
  const until = Date.now() + ms;
  while (Date.now() < until) {
    out.push(now(r));
    await new Promise((res) => setTimeout(res, 200));
  }
  return out;
}

export async function token(r: Rig): Promise<string> {
  const t = await postForm(
    `${r.url}/oauth2/token`,
    { grant_type: 'client_credentials' },
    { authorization: basic('limits', r.secret) },
  );
  return t.body.access_token as string;
}

export async function metric(r: Rig, name: string): Promise<string[]> {
  const res = await fetch(`${r.url}/metrics`, { headers: { authorization: `Bearer ${await token(r)}` } });
  const text = await res.text();
  return text.split('\n').filter((l) => l.startsWith(name));
}

export const fullBattery = (c: SimConfig) => {
  for (const b of c.battery.blocks) b.initialSocPct = b.socMaxPct;
};

/** the status page's facts (/status.json) and the page itself, as the site owner */
export async function statusPage(r: Rig): Promise<{ json: any; html: string }> {
  const login = await fetch(`${r.url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(OWNER),
    redirect: 'manual',
  });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const json = await (await fetch(`${r.url}/status.json`, { headers: { cookie } })).json();
  const html = await (await fetch(`${r.url}/`, { headers: { cookie } })).text();
  return { json, html };
}
