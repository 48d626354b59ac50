/**
 * Setup in the browser, through its HTTP endpoints, against `sitegw run` as its own process over
 * the simulator's Modbus TCP servers: the owner signs in, changes the site's name and the tariff;
 * site.yaml keeps its comments, the old file is kept beside it, the daemon restarts in its
 * process and serves the new values to the same session. A bad value is refused 400 with
 * check-config's line and hint, and leaves the file as it was.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setOwnerPassword } from '../../src/auth/owner.js';
import { withDb } from '../../src/cli/data-dir.js';
import { ScaledClock } from '../../src/core/clock.js';
import type { DemoCredentials } from '../../src/demo/credentials.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { partnerToken } from '../support/auth.js';
import { HAVE_CHROMIUM, launchChromium, warnWithoutChromium } from '../support/chromium.js';
import { ROOT, sitegwCommand } from '../support/cli.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';
import { freePort } from '../support/free-port.js';
import { allNodes } from '../support/topology.js';

const PASSWORD = 'correct horse battery staple';
const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url).pathname;
warnWithoutChromium('setup page browser test');

function siteYaml(s: SimServers, port: number): string {
  return `# the Millers' gateway, written by hand: keep these notes
version: 1
site:
  id: miller-home
  # shown to partners
  name: Home
  timezone: Europe/Berlin # where the daily buckets start
  currency: EUR
  location:
    latitude: 52.52
    longitude: 13.405
http:
  host: 127.0.0.1
  port: ${port}
dataDir: ./data
tariff:
  type: flat
  # the supplier's 2026 price
  importPrice: 0.30
  exportPrice: 0.08
devices:
  - id: inverter
    role: inverter
    profile: sunspec
    connection: { type: tcp, host: ${s.inverter.host}, port: ${s.inverter.port}, unitId: 1 }
  - id: grid-meter
    role: grid-meter
    profile: sunspec
    connection: { type: tcp, host: ${s.meter.host}, port: ${s.meter.port}, unitId: 1 }
`;
}

describe('setup through the owner’s endpoints on sitegw run', () => {
  let servers: SimServers;
  let dir: string;
  let file: string;
  let original: string;
  let url: string;
  let cookie: string;
  let child: ChildProcess;
  let out = '';
  let exit: Promise<number | null>;
  // what systemd would hear: a socat-bound datagram socket as NOTIFY_SOCKET (test/ops/watchdog.test.ts)
  let listener: ChildProcess | undefined;
  let notified = '';

  const call = (path: string, init: RequestInit = {}, withCookie = true) =>
    fetch(`${url}${path}`, {
      ...init,
      redirect: 'manual',
      headers: { ...(withCookie ? { cookie } : {}), ...(init.headers as Record<string, string>) },
    });
  const post = (changes: unknown, withCookie = true) =>
    call(
      '/setup/config',
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ changes }) },
      withCookie,
    );
  const inForce = async () => (await (await call('/setup/config.json')).json()) as any;
  const backups = () => readdirSync(dir).filter((n) => n.startsWith('site.yaml.bak.'));

  beforeAll(async () => {
    const clock = new ScaledClock(1);
    servers = await startSimServers(new SimSite(undefined, clock.now()), clock, {});
    dir = mkdtempSync(join(tmpdir(), 'sitegw-setup-config-'));
    file = join(dir, 'site.yaml');
    original = siteYaml(servers, await freePort());
    writeFileSync(file, original);
    await withDb(join(dir, 'data'), (db) => setOwnerPassword(db, 'owner', PASSWORD, Date.now()));
    const sock = join(dir, 'notify.sock');
    listener = spawn('socat', ['-u', `UNIX-RECV:${sock}`, '-']);
    listener.stdout!.setEncoding('utf8').on('data', (d: string) => (notified += d));
    await waitFor('the notify socket', () => spawnSync('test', ['-S', sock]).status === 0);
    child = spawn(...sitegwCommand(['run', '--config', file]), {
      cwd: ROOT,
      env: { ...process.env, SITEGW_LOG_LEVEL: 'info', NOTIFY_SOCKET: sock },
    });
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    exit = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    url = await waitFor('the started log line', () => /"url":"(http:[^"]+)"/.exec(out)?.[1], 60_000);
    const login = await fetch(`${url}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'owner', password: PASSWORD }).toString(),
    });
    expect(login.status).toBe(303);
    cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  }, 90_000);

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exit;
    }
    listener?.kill();
    await servers?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a change without the owner’s session, and one from another site', async () => {
    const anon = await post([{ path: ['site', 'name'], value: 'Intruder' }], false);
    expect([302, 303, 401]).toContain(anon.status);
    const cross = await call('/setup/config', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
      body: JSON.stringify({ changes: [{ path: ['site', 'name'], value: 'Intruder' }] }),
    });
    expect(cross.status).toBe(403);
    expect(readFileSync(file, 'utf8')).toBe(original);
  });

  it('refuses a bad time zone 400 CONFIG_REFUSED with check-config’s line and hint; the file and the daemon stay', async () => {
    const before = await inForce();
    const r = await post([{ path: ['site', 'timezone'], value: 'Mars/Olympus_Mons' }]);
    expect(r.status).toBe(400);
    const body = (await r.json()) as any;
    expect(body.code).toBe('CONFIG_REFUSED');
    expect(body.errors[0]).toMatchObject({ path: 'site.timezone', line: 7 });
    expect(body.errors[0].hint).toMatch(/IANA/);
    const http = await post([{ path: ['http', 'port'], value: 1 }]);
    expect(http.status).toBe(400);
    expect(((await http.json()) as any).code).toBe('CONFIG_PATH_REFUSED');
    // a path through a plain value: a named 400, not the yaml package's exception as a 500
    const through = await post([{ path: ['site', 'name', 'first'], value: 'x' }]);
    expect(through.status).toBe(400);
    expect(((await through.json()) as any).code).toBe('CONFIG_PATH_REFUSED');
    expect(readFileSync(file, 'utf8')).toBe(original);
    expect(backups()).toEqual([]);
    expect((await inForce()).start.id).toBe(before.start.id);
  });

  it('changes the name and the tariff: comments kept, backup beside, restarted in its process, new values served to the same session', async () => {
    const before = await inForce();
    expect(before.config.site.name).toBe('Home');
    const r = await post([
      { path: ['site', 'name'], value: 'Miller family home' },
      { path: ['tariff', 'importPrice'], value: 0.34 },
    ]);
    expect(r.status).toBe(202);
    const body = (await r.json()) as any;
    expect(body.restarting).toBe(true);
    const now = readFileSync(file, 'utf8');
    expect(now).toBe(
      original.replace('name: Home', 'name: Miller family home').replace('importPrice: 0.30', 'importPrice: 0.34'),
    );
    expect(backups()).toHaveLength(1);
    expect(readFileSync(body.backup, 'utf8')).toBe(original);

    const after = await waitFor(
      'the restarted daemon',
      async () => {
        const c = await inForce();
        return c.start.id !== before.start.id ? c : undefined;
      },
      60_000,
    );
    expect(after.config.site.name).toBe('Miller family home');
    expect(after.config.tariff).toMatchObject({ type: 'flat', importPrice: 0.34, exportPrice: 0.08 });
    // the status page of the new start names the site anew
    const status = (await (await call('/status.json')).json()) as any;
    expect(status.site.name).toBe('Miller family home');
    expect(child.exitCode).toBe(null);
    expect(out).toContain('site.yaml changed on the setup page: restarting');
    // systemd hears a reload, not a stop (after STOPPING=1 it would kill the process at TimeoutStopSec)
    await waitFor('READY=1 from the new start', () => (notified.match(/^READY=1$/gm) ?? []).length >= 2);
    expect(notified).toMatch(/^RELOADING=1$/m);
    expect(notified).toMatch(/^MONOTONIC_USEC=\d+$/m);
    expect(notified).not.toMatch(/^STOPPING=1$/m);
  }, 90_000);

  it('creates a partner client with its devices: the secret once, a token with it, the topology of those devices; an unknown device refused', async () => {
    const add = (body: unknown) =>
      call('/setup/clients', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const bad = await add({ id: 'app', devices: ['inverter', 'battery-9'] });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'CLIENT_REFUSED', message: expect.stringContaining("'battery-9'") });
    const r = await add({ id: 'app', name: 'Energy app', devices: ['inverter'] });
    expect(r.status).toBe(201);
    const body = (await r.json()) as any;
    expect(body.client).toMatchObject({ id: 'app', name: 'Energy app', devices: ['inverter'] });
    expect(body.secret).toMatch(/^sgw_cs_/);
    const listed = (await (await call('/setup/clients.json')).json()) as any;
    expect(listed.clients).toEqual([expect.objectContaining({ id: 'app', devices: ['inverter'] })]);
    expect(JSON.stringify(listed)).not.toContain(body.secret);
    const token = await partnerToken({
      tokenUrl: `${url}/oauth2/token`,
      client: { id: 'app', secret: body.secret },
    } as DemoCredentials);
    const topo = await getJson(`${url}/api/v1/sites/miller-home/topology?compact=false`, token);
    expect(topo.status).toBe(200);
    const ids = allNodes(topo.body.topology).map((n) => n.id);
    expect(ids).toContain('inverter');
    expect(ids).not.toContain('grid-meter');
    expect((await add({ id: 'app', devices: [] })).status).toBe(400);
  });

  it('scans the inverter’s bus and adds a battery it found; a found device under a taken id is refused by check-config', async () => {
    const scan = async (body: unknown) =>
      call('/setup/scan', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect(((await (await scan({ tcp: 'not a host' })).json()) as any).code).toBe('SCAN_REFUSED');
    const r = await scan({ tcp: `${servers.inverter.host}:${servers.inverter.port}`, units: '1-3' });
    expect(r.status).toBe(200);
    const found = ((await r.json()) as any).found as { device: any; note: string }[];
    const battery = found.find((f) => f.device.role === 'battery');
    expect(battery, JSON.stringify(found)).toBeDefined();
    expect(battery!.device.connection).toMatchObject({ type: 'tcp', port: servers.inverter.port });
    expect(battery!.note).toMatch(/^unit \d+: /);
    const before = await inForce();
    const at = before.config.devices.length;
    const taken = await post([{ path: ['devices', at], value: { ...battery!.device, id: 'inverter' } }]);
    expect(taken.status).toBe(400);
    const refusal = (await taken.json()) as any;
    expect(refusal.code).toBe('CONFIG_REFUSED');
    expect(refusal.errors[0].path).toMatch(new RegExp(`^devices\\[${at}\\]`));
    const added = await post([{ path: ['devices', at], value: battery!.device }]);
    expect(added.status).toBe(202);
    const after = await waitFor(
      'the restart with the battery',
      async () => {
        const c = await inForce();
        return c.start.id !== before.start.id ? c : undefined;
      },
      60_000,
    );
    expect(after.config.devices.map((d: any) => d.id)).toEqual(['inverter', 'grid-meter', battery!.device.id]);
    // the comments above the devices the owner wrote are still there
    expect(readFileSync(file, 'utf8')).toContain("# the Millers' gateway, written by hand: keep these notes");
  }, 90_000);

  it.skipIf(!HAVE_CHROMIUM)(
    'in Chromium: the page shows the config in force, a refused value with its line, and waits for a saved one',
    async () => {
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.goto(`${url}/setup`);
        expect(new URL(page.url()).pathname).toBe('/login');
        await page.fill('#username', 'owner');
        await page.fill('#password', PASSWORD);
        await Promise.all([page.waitForURL(`${url}/`), page.click('button[type=submit]')]);
        await page.click('a[href="/setup"]');
        await expect.poll(() => page.textContent('#in-force')).toContain('Miller family home');
        expect(await page.inputValue('#f-site-timezone')).toBe('Europe/Berlin');
        const site = page.locator('form[data-section=site]');

        await page.fill('#f-site-timezone', 'Europe/Berlln');
        await site.locator('button[type=submit]').click();
        await expect.poll(() => site.locator('.result').textContent()).toContain('CONFIG_REFUSED');
        expect(await site.locator('.result').textContent()).toMatch(/line 7: site\.timezone: .*IANA/);
        const refused = readFileSync(file, 'utf8');
        expect(refused).toContain('timezone: Europe/Berlin #');

        await page.fill('#f-site-timezone', 'Europe/Berlin');
        await page.fill('#f-site-name', 'The Millers');
        await site.locator('button[type=submit]').click();
        await expect
          .poll(() => site.locator('.result').textContent(), { timeout: 60_000 })
          .toContain('Saved and in force.');
        expect(await page.textContent('#in-force')).toContain('The Millers');
        expect(readFileSync(file, 'utf8')).toBe(refused.replace('name: Miller family home', 'name: The Millers'));
        await page.fill('#scan-tcp', `${servers.meter.host}:${servers.meter.port}`);
        await page.fill('#scan-units', '1-2');
        await page.click('#scan-form button[type=submit]');
        await expect.poll(() => page.textContent('#scan-form .result'), { timeout: 30_000 }).toMatch(/Found 2 devices/);
        const second = page.locator('#found [data-found="1"]');
        await second.locator('.pick').check();
        await second.locator('.pick-id').fill('house');
        await second.locator('.pick-role').selectOption('consumption-meter');
        await page.click('#pick-form button[type=submit]');
        await expect
          .poll(() => page.textContent('#pick-form .result'), { timeout: 60_000 })
          .toContain('Saved and in force.');
        expect(await page.textContent('#devices [data-device=house]')).toBe(
          'house: consumption-meter, profile sunspec',
        );
        await page.fill('#client-id', 'wallbox');
        await page.uncheck('#client-devices input[value=grid-meter]');
        await page.click('#client-form button[type=submit]');
        await expect.poll(() => page.textContent('#client-form .result')).toMatch(/shown only this once:\s*sgw_cs_/);
        await expect
          .poll(() => page.textContent('#clients [data-client=wallbox]'))
          .toMatch(/^wallbox \(wallbox\): (?!.*grid-meter).*\bhouse\b/);
        mkdirSync(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: join(ARTIFACTS, 'setup-page.png'), fullPage: true });
      } finally {
        await browser.close();
      }
    },
    90_000,
  );

  it('stops cleanly at SIGTERM after the restart', async () => {
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    await waitFor('STOPPING=1', () => /^STOPPING=1$/m.test(notified));
  }, 30_000);
});

describe('setup in the demo', () => {
  it('says it has no site.yaml to change: 409 SETUP_UNAVAILABLE', async () => {
    const demo = await demoSite();
    try {
      const login = await fetch(`${demo.url}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          username: demo.credentials.owner.username,
          password: demo.credentials.owner.password,
        }).toString(),
      });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const r = await fetch(`${demo.url}/setup/config`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json' },
        body: JSON.stringify({ changes: [{ path: ['site', 'name'], value: 'X' }] }),
      });
      expect(r.status).toBe(409);
      expect(((await r.json()) as { code: string }).code).toBe('SETUP_UNAVAILABLE');
      const page = await (await fetch(`${demo.url}/setup`, { headers: { cookie } })).text();
      expect(page).toContain('nothing here can be saved');
    } finally {
      await demo.cleanup();
    }
  }, 60_000);
});
