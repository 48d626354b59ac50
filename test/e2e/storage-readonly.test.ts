/**
 * `sitegw run` on a data directory that is read-only at start (issue 41, finding 4: it exited 1 with
 * EROFS, a crash loop under systemd with the API down), as a card the kernel remounted read-only
 * after errors: the daemon serves read-only instead: a known partner signs in, the stored buckets
 * are served, /healthz is `failing` and says why. Then the filesystem is writable again and a
 * restart is normal. Needs root (a tmpfs of its own); skipped, and says so, without it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScaledClock } from '../../src/core/clock.js';
import { demoSiteYaml } from '../../src/demo/default-site.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { isReadOnlyCopy } from '../../src/store/read-only.js';
import { basic, postForm } from '../support/auth.js';
import { ROOT, sitegwCommand } from '../support/cli.js';
import { getJson } from '../support/demo.js';
import {
  mountTmpfs,
  remount,
  runSitegw,
  type SitegwRun,
  stopSitegw,
  unmount,
  whyNoMount,
} from '../support/storage-faults.js';

const SKIP = whyNoMount();
if (SKIP) console.warn(`SKIPPED: read-only data directory tests need a tmpfs of their own: ${SKIP}`);

describe.skipIf(SKIP !== null)('a read-only data directory at start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-ro-'));
  const mnt = join(dir, 'mnt');
  const dataDir = join(mnt, 'data');
  const config = join(dir, 'site.yaml');
  let servers: SimServers;
  let secret: string;
  const runs: SitegwRun[] = [];
  const token = (url: string) =>
    postForm(`${url}/oauth2/token`, { grant_type: 'client_credentials' }, { authorization: basic('partner', secret) });

  beforeAll(async () => {
    mkdirSync(mnt);
    mountTmpfs(mnt);
    const clock = new ScaledClock(1);
    servers = await startSimServers(new SimSite(undefined, clock.now()), clock, { host: '127.0.0.1' });
    writeFileSync(
      config,
      demoSiteYaml(servers, { httpHost: '127.0.0.1', httpPort: 0, dataDir, pollSeconds: 1, batteryBlocks: 1 }),
    );
    const add = spawnSync(...sitegwCommand(['clients', 'add', 'partner', '--config', config, '--device', 'inverter']), {
      cwd: ROOT,
    });
    expect(add.status, add.stderr.toString()).toBe(0);
    secret = /client secret: (\S+)/.exec(add.stdout.toString())![1]!;
  }, 60_000);

  afterAll(async () => {
    for (const r of runs) await stopSitegw(r, 'SIGKILL');
    await servers?.close();
    unmount(mnt);
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves read-only: sign-in for a known client, the API, health failing with the reason', async () => {
    // a first life writes the database, its credentials and the id-token key
    const first = await runSitegw(config);
    runs.push(first);
    expect((await token(first.url)).status).toBe(200);
    await stopSitegw(first);

    remount(mnt, 'ro');
    const ro = await runSitegw(config);
    runs.push(ro);
    const t = await token(ro.url);
    expect(t.status, t.text).toBe(200);
    const devices = await getJson(`${ro.url}/api/v1/devices`, t.body.access_token);
    expect(devices.status).toBe(200);
    const health = (await getJson(`${ro.url}/healthz`)).body as { status: string; problems: string[] };
    expect(health.status).toBe('failing');
    expect(health.problems.join(' ')).toMatch(/read-only/);
    await stopSitegw(ro);
    expect(await ro.exit, ro.out().slice(-3000)).toBe(0);

    remount(mnt, 'rw');
    const again = await runSitegw(config);
    runs.push(again);
    expect((await token(again.url)).status).toBe(200);
    await stopSitegw(again);
  }, 120_000);

  it('a copy a killed read-only daemon left is removed by the next start, and a clean stop removes its own', async () => {
    // the daemons' temporary folder of their own, so their copies are counted alone
    const tmp = join(dir, 'tmp');
    mkdirSync(tmp);
    const copies = () => readdirSync(tmp).filter(isReadOnlyCopy);
    remount(mnt, 'ro');
    try {
      const killed = await runSitegw(config, { TMPDIR: tmp });
      runs.push(killed);
      const left = copies();
      expect(left).toHaveLength(1);
      await stopSitegw(killed, 'SIGKILL');
      expect(copies()).toEqual(left);

      const next = await runSitegw(config, { TMPDIR: tmp });
      runs.push(next);
      expect(next.out()).toContain('removed the read-only copies of the database that killed daemons left');
      const now = copies();
      expect(now).toHaveLength(1);
      expect(now).not.toEqual(left);
      await stopSitegw(next);
      expect(copies()).toEqual([]);
    } finally {
      remount(mnt, 'rw');
    }
  }, 120_000);
});
