/**
 * The first run in the browser (docs/install.md "Setup in the browser"): `sitegw run` on the
 * package's placeholder serves only the first-run page; with the setup code from its file the
 * owner scans the simulator's Modbus TCP bus, picks its devices, is refused a bad time zone with
 * check-config's line and hint, then creates the site; the gateway starts on it in the same
 * process, and the owner signs in to a status page showing the simulated devices.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScaledClock } from '../../src/core/clock.js';
import { SETUP_CODE_FILE } from '../../src/setup/first-run.js';
import { UNCONFIGURED_MARK } from '../../src/setup/site-yaml.js';
import { startSimRtuServer } from '../../src/sim/rtu-server.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { HAVE_CHROMIUM, launchChromium, warnWithoutChromium } from '../support/chromium.js';
import { ROOT, sitegwCommand } from '../support/cli.js';
import { type PlaceholderRun, runOnPlaceholder } from '../support/first-run.js';
import { HAVE_SOCAT, ptyPair } from '../support/socat.js';

const PASSWORD = 'first-run-password';

describe('the first run: from the placeholder to a running site in the browser', () => {
  let servers: SimServers;
  let dir: string;
  let file: string;
  let url: string;
  let run: PlaceholderRun | undefined;
  const code = () => readFileSync(join(dir, 'data', SETUP_CODE_FILE), 'utf8').trim();
  const post = (path: string, body: unknown) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    warnWithoutChromium('test/e2e/first-run.test.ts');
    const clock = new ScaledClock(1);
    servers = await startSimServers(new SimSite(undefined, clock.now()), clock, {});
    dir = mkdtempSync(join(tmpdir(), 'sitegw-first-run-'));
    run = await runOnPlaceholder(dir, { SITEGW_LOG_LEVEL: 'info' });
    ({ file, url } = run);
  }, 90_000);

  afterAll(async () => {
    await run?.kill();
    await servers?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves only the first-run page; every change needs the setup code, which only the file and the log hold', async () => {
    expect(run!.output()).toContain(`give the setup code ${code()}`);
    expect((await fetch(`${url}/`)).status).toBe(200);
    expect((await fetch(`${url}/login`)).status).toBe(503);
    expect((await fetch(`${url}/api/v1/sites`)).status).toBe(404);
    const wrong = await post('/onboarding/scan', { code: '000-000-000', target: 'x', units: '1' });
    expect(wrong.status).toBe(403);
    expect(((await wrong.json()) as any).code).toBe('SETUP_CODE_WRONG');
    const noDevices = await post('/onboarding/site', {
      code: code(),
      owner: { username: 'owner', password: PASSWORD },
      site: { siteName: 'x', timezone: 'UTC', currency: 'EUR', latitude: 0, longitude: 0 },
      devices: [],
    });
    expect(((await noDevices.json()) as any).code).toBe('NO_DEVICES');
    const short = await post('/onboarding/site', { code: code(), owner: { username: 'owner', password: 'short' } });
    expect(((await short.json()) as any).code).toBe('OWNER_REFUSED');
    for (const body of ['not json', '[]', '{"code": 5}'])
      expect(
        (
          await fetch(`${url}/onboarding/site`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
          })
        ).status,
      ).toBeLessThan(500);
    expect(readFileSync(file, 'utf8')).toMatch(new RegExp(`^${UNCONFIGURED_MARK}`));
    // the unit's ExecStopPost on a gateway not set up: nothing to release, and no failure
    const release = spawnSync(...sitegwCommand(['control', 'release', '--config', file]), {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(release.status, release.stderr).toBe(0);
    expect(release.stdout).toContain('not set up');
  });

  it.skipIf(!HAVE_SOCAT)(
    'scans a serial line (nothing holds it before the site exists); a bad device path is refused by name',
    async () => {
      const line = await ptyPair();
      const clock = new ScaledClock(1);
      const rtu = await startSimRtuServer(new SimSite(undefined, clock.now()), clock, { path: line.a, host: 'meter' });
      try {
        const bad = await post('/onboarding/scan', { code: code(), rtu: { device: '/etc/passwd/../x' }, units: '1-2' });
        expect(bad.status).toBe(400);
        expect(((await bad.json()) as any).code).toBe('SCAN_REFUSED');
        const r = await post('/onboarding/scan', {
          code: code(),
          rtu: { device: line.b, baudRate: 9600, parity: 'none' },
          units: '1-2',
        });
        expect(r.status).toBe(200);
        const found = ((await r.json()) as any).devices as { device: any; note: string }[];
        expect(found.map((f) => f.device.role).sort()).toEqual(['consumption-meter', 'grid-meter']);
        expect(found[0]!.device.connection).toMatchObject({ type: 'rtu', device: line.b, baudRate: 9600 });
      } finally {
        await rtu.close();
        await line.close();
      }
    },
  );

  it.skipIf(!HAVE_CHROMIUM)(
    'in Chromium: the code, the owner, the site, a scan of the bus, a refused time zone, then the running site',
    async () => {
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.goto(`${url}/`);
        await page.fill('#code', code());
        await page.fill('#password', PASSWORD);
        await page.fill('#site-name', 'Miller family home');
        await page.fill('#latitude', '52.52');
        await page.fill('#longitude', '13.4');
        await page.fill('#scan-target', `${servers.inverter.host}:${servers.inverter.port}`);
        await page.fill('#scan-units', '1-3');
        await page.click('#scan');
        await expect.poll(() => page.locator('#found .device').count(), { timeout: 30_000 }).toBeGreaterThan(0);
        expect(await page.textContent('#found')).toMatch(/inverter/);

        await page.fill('#timezone', 'Europe/Berlln');
        await page.click('#create');
        await expect.poll(() => page.textContent('#say')).toContain('CONFIG_REFUSED');
        expect(await page.textContent('#say')).toMatch(/line \d+: site\.timezone: .*IANA/);
        expect(readFileSync(file, 'utf8')).toMatch(new RegExp(`^${UNCONFIGURED_MARK}`));

        await page.fill('#timezone', 'Europe/Berlin');
        await page.click('#create');
        await page.waitForURL(`${url}/login`, { timeout: 90_000 });
        const written = readFileSync(file, 'utf8');
        expect(written).toContain('# site.yaml written by the first-run page');
        expect(written).toContain('name: "Miller family home"');
        // the placeholder is kept beside it, as every change's old file
        expect(readdirSync(dir).some((n) => n.startsWith('site.yaml.bak.'))).toBe(true);

        await page.fill('#username', 'owner');
        await page.fill('#password', PASSWORD);
        await Promise.all([page.waitForURL(`${url}/`), page.click('button[type=submit]')]);
        await expect.poll(() => page.textContent('#devices'), { timeout: 30_000 }).toMatch(/inverter/);
        expect(await page.textContent('h1')).toBe('Miller family home');
        // the code did its work: gone with the page
        expect(existsSync(join(dir, 'data', SETUP_CODE_FILE))).toBe(false);
      } finally {
        await browser.close();
      }
    },
    180_000,
  );
});
