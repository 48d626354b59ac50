import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScaledClock } from '../../src/core/clock.js';
import type { DemoCredentials } from '../../src/demo/credentials.js';
import { demoSiteYaml } from '../../src/demo/default-site.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { exampleElsewhere } from '../config/fixtures.js';
import { httpsGet, partnerToken } from '../support/auth.js';
import { sitegwCommand } from '../support/cli.js';
import { getJson, waitFor } from '../support/demo.js';

const ROOT = new URL('../../', import.meta.url).pathname;

interface Proc {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exit: Promise<number | null>;
}

function sitegw(args: string[]): Proc {
  const child = spawn(...sitegwCommand(args), { cwd: ROOT, env: { ...process.env, SITEGW_LOG_LEVEL: 'info' } });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exit };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'sitegw-cli-'));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}
function track(p: Proc): Proc {
  cleanups.push(async () => {
    if (p.child.exitCode === null) {
      p.child.kill('SIGKILL');
      await p.exit;
    }
  });
  return p;
}

describe('sitegw CLI', () => {
  it('demo: prints where the API is, serves live data, and stops cleanly on SIGTERM', async () => {
    const dir = tmp();
    const p = track(sitegw(['demo', '--port', '0', '--data-dir', dir, '--speed', '60', '--history', 'PT2H']));
    const url = await waitFor('the API address', () => /Energy Site API:\s+(http:\/\/\S+)/.exec(p.out())?.[1], 60_000);
    await waitFor('the access help', () => p.out().includes('Ctrl-C'));
    // the history fills behind the banner (issue 46): its log line says when it is done
    await waitFor('the history fill', () => p.out().includes('"msg":"history pre-filled"'), 60_000);
    // into a pipe the log stays JSON, one object per line, for whatever reads it
    const logLines = p.out().slice(0, p.out().indexOf('sitegw demo is running')).split('\n').filter(Boolean);
    expect(logLines.length).toBeGreaterThan(0);
    for (const l of logLines) expect(JSON.parse(l)).toMatchObject({ app: 'sitegw', msg: expect.any(String) });
    const creds = JSON.parse(readFileSync(join(dir, 'demo-credentials.json'), 'utf8')) as DemoCredentials;
    // the banner shows how to get a token with the credentials the file holds
    expect(p.out()).toContain(
      `curl -s -u '${creds.client.id}:${creds.client.secret}' -d grant_type=client_credentials '${url}/oauth2/token'`,
    );
    expect(statSync(join(dir, 'demo-credentials.json')).mode & 0o077).toBe(0);
    const token = await partnerToken(creds);
    expect((await getJson(`${url}/api/v1/sites/demo-site/topology`)).status).toBe(401);
    const topo = await getJson(`${url}/api/v1/sites/demo-site/topology`, token);
    expect(topo.status).toBe(200);
    const from = new Date(Date.now() - 3 * 86_400_000).toISOString();
    const tel = await getJson(
      `${url}/api/v1/devices/grid-meter__GRID_METER_DERIVED/telemetry?interval=${from}/P7D`,
      token,
    );
    expect(tel.body.entries.length).toBeGreaterThanOrEqual(6); // two hours of history at least
    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);
    expect(p.err()).toContain('SIGTERM');
  });

  it('run: reads site.yaml and polls the devices it names', async () => {
    const dir = tmp();
    const clock = new ScaledClock(1);
    const servers: SimServers = await startSimServers(new SimSite(undefined, clock.now()), clock, {});
    cleanups.push(() => servers.close());
    const file = join(dir, 'site.yaml');
    writeFileSync(
      file,
      demoSiteYaml(servers, { httpHost: '127.0.0.1', httpPort: 0, dataDir: 'data', pollSeconds: 1, batteryBlocks: 2 }),
    );
    // the installer registers a partner with the CLI; the running daemon reads it from the store
    const add = sitegw(['clients', 'add', 'ev-charger', '--config', file, '--device', 'inverter,grid-meter']);
    expect(await add.exit).toBe(0);
    const secret = /client secret: (\S+)/.exec(add.out())![1]!;
    const p = track(sitegw(['run', '--config', file]));
    const url = await waitFor('the started log line', () => /"url":"(http:[^"]+)"/.exec(p.out())?.[1], 60_000);
    const token = await partnerToken({
      tokenUrl: `${url}/oauth2/token`,
      client: { id: 'ev-charger', secret },
    } as DemoCredentials);
    await waitFor('devices online', async () => {
      const { body } = await getJson(`${url}/api/v1/devices`, token);
      // the partner sees the two devices the installer assigned to it and the battery blocks behind
      // its inverter (docs/design.md "partner vs customer"), and no other
      expect(body.devices.map((d: { deviceId: string }) => d.deviceId).sort()).toEqual([
        'battery-1',
        'battery-2',
        'grid-meter',
        'inverter',
      ]);
      return body.devices?.every((d: { online: boolean }) => d.online) ? true : undefined;
    });
    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);
  });

  it('run: an invalid site.yaml is refused with file:line and exit code 1; a missing file with 2', async () => {
    const dir = tmp();
    const file = join(dir, 'site.yaml');
    writeFileSync(file, 'site:\n  id: Bad Id\n');
    const bad = sitegw(['run', '--config', file]);
    expect(await bad.exit).toBe(1);
    expect(bad.err()).toMatch(/site\.yaml:2:\d+ site\.id/);
    const missing = sitegw(['check-config', join(dir, 'nope.yaml')]);
    expect(await missing.exit).toBe(2);
    const example = join(dir, 'example.yaml');
    writeFileSync(example, exampleElsewhere());
    // --offline: the example's devices are at LAN addresses (192.168.x) no test may reach
    const ok = sitegw(['check-config', '--offline', example]);
    expect(await ok.exit).toBe(0);
  });

  it('refuses unknown commands and bad options with a clear line', async () => {
    const unknown = sitegw(['frobnicate']);
    expect(await unknown.exit).toBe(2);
    expect(unknown.err()).toContain("unknown command 'frobnicate'");
    const badSpeed = sitegw(['demo', '--speed', 'fast', '--port', '0']);
    expect(await badSpeed.exit).toBe(1);
    expect(badSpeed.err()).toContain('--speed must be a positive number');
    const badHistory = sitegw(['demo', '--history', 'two days', '--port', '0']);
    expect(await badHistory.exit).toBe(1);
    expect(badHistory.err()).toContain('--history must be an ISO 8601 duration');
  });
});

describe('off loopback the API speaks HTTPS', () => {
  const lanSite = (dir: string, extra = '') => {
    const file = join(dir, 'site.yaml');
    const ep = { host: '127.0.0.1', port: 1502 };
    writeFileSync(
      file,
      demoSiteYaml(
        { inverter: ep, meter: { ...ep, port: 1503 } },
        { httpHost: '0.0.0.0', httpPort: 0, dataDir: 'data', pollSeconds: 10, batteryBlocks: 2 },
      ).replace('  port: 0\n', `  port: 0\n${extra}`),
    );
    return file;
  };

  it('creates a self-signed certificate on first start, logs its fingerprint, and `sitegw tls fingerprint` shows the same', async () => {
    const dir = tmp();
    const file = lanSite(dir);
    const p = track(sitegw(['run', '--config', file]));
    const started = await waitFor(
      'the started log line',
      () => /"url":"(https:[^"]+)".*"fingerprint":"([0-9A-F:]+)"/.exec(p.out()) ?? undefined,
      60_000,
    );
    const port = new URL(started[1]!).port;
    const certFile = join(dir, 'data', 'tls', 'cert.pem');
    const served = await httpsGet(`https://127.0.0.1:${port}/openapi.json`, readFileSync(certFile, 'utf8'));
    expect(served.status).toBe(200);
    expect(served.fingerprint).toBe(started[2]);
    // a plain-HTTP client is not served: the TLS server closes the connection
    await expect(fetch(`http://127.0.0.1:${port}/openapi.json`)).rejects.toThrow();
    const fp = sitegw(['tls', 'fingerprint', '--config', file]);
    expect(await fp.exit).toBe(0);
    expect(fp.out()).toContain(`SHA-256 fingerprint: ${started[2]}`);
    expect(statSync(join(dir, 'data', 'tls', 'key.pem')).mode & 0o077).toBe(0);
  });

  it('serves plain HTTP on a LAN address only with http.insecure, and warns', async () => {
    const dir = tmp();
    const p = track(sitegw(['run', '--config', lanSite(dir, '  insecure: true\n')]));
    const url = await waitFor('the started log line', () => /"url":"(http:[^"]+)"/.exec(p.out())?.[1], 60_000);
    expect(p.out()).toMatch(/"level":40,.*http\.insecure is set/);
    expect((await getJson(`${url.replace('0.0.0.0', '127.0.0.1')}/api/v1/sites`)).status).toBe(401);
  });
});
