/**
 * The bucket layout's migration (schema 16 -> 17, src/store/recent-buckets.ts) on a database of
 * the layout before with a year of buckets, under SIGKILL: the daemon runs as a real child process
 * against the simulator and is killed at seeded moments of its start (before, during and after the
 * migration step) and while it polls and closes, then started again on the same data directory.
 * After every kill: the file's integrity is ok, its version is 16 to 19 (a step is one
 * transaction; 18 adds the energy floors, store/energy-state.ts, 19 the uplink's seq columns), and every bucket of the year is there with the same values. At the end the daemon
 * serves a day of that year through the API from the stored values and its own closes went to the
 * recent table.
 */
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScaledClock } from '../../src/core/clock.js';
import { demoSiteYaml } from '../../src/demo/default-site.js';
import { defaultSimConfig } from '../../src/sim/config.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { openDatabase } from '../../src/store/db.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { streamKey } from '../../src/store/streams.js';
import { rng } from '../fuzz/gen.js';
import { partnerToken } from '../support/auth.js';
import { getJson, waitFor } from '../support/demo.js';
import { exited, readDb as readDaemonDb, spawnDaemonChild } from '../support/run-daemon.js';

const SEED = Number(process.env.SITEGW_MIGRATION_SEED ?? 46);
const KILLS = 5;
const SPEED = 1000;
const DAY_S = 86_400;
/** the site's own streams and some more, as a larger site would have */
const KEYS = ['battery-1', 'inverter', ...Array.from({ length: 8 }, (_, i) => `old-${i}`)];

describe('bucket layout migration: a year of the layout before, SIGKILLed at seeded moments and restarted', () => {
  let servers: SimServers;
  let child: ChildProcess | null = null;
  const dataDir = mkdtempSync(join(tmpdir(), 'sitegw-migrate-'));
  const dbFile = join(dataDir, 'sitegw.db');
  const confFile = join(dataDir, 'site.yaml');
  const originReal = Date.now();
  const originSim = Date.UTC(2026, 5, 1, 4, 0, 0);
  const clock = new ScaledClock(SPEED, originSim);
  // the year ends a day before the daemon's first start
  const yearTo = originSim / 1000 - DAY_S;
  const yearFrom = yearTo - 365 * DAY_S;
  let yearHash = '';

  /** every bucket of the year, in key order, as one hash; through both tables once they exist */
  const hashYear = (db: Database): string => {
    const v = db.pragma('user_version', { simple: true }) as number;
    const table = v >= 17 ? 'buckets_all' : 'buckets';
    const h = createHash('sha256');
    const rows = db
      .prepare(
        `SELECT s.key, b.* FROM ${table} b JOIN streams s ON s.id = b.stream WHERE b.start_s < ? ORDER BY s.key, b.start_s`,
      )
      .raw()
      .iterate(yearTo);
    for (const r of rows) h.update(JSON.stringify(r));
    return h.digest('hex');
  };

  beforeAll(async () => {
    // schema 16: today's file less what migrations 17 to 19 added
    const db = openDatabase(dbFile);
    expect(MIGRATIONS).toHaveLength(19);
    db.exec('DROP VIEW buckets_all; DROP TABLE buckets_recent; DROP TABLE energy_floor; DROP TABLE uplink_sent');
    db.pragma('user_version = 16');
    for (const k of KEYS) streamKey(db, k);
    // a year of 10 streams, 350,400 buckets, in the order the bucketer wrote them
    db.prepare(
      `WITH RECURSIVE q(t) AS (SELECT ? UNION ALL SELECT t + 900 FROM q WHERE t + 900 < ?)
       INSERT INTO buckets (stream, start_s, covered_ms, power_W, soc, energy_in, energy_out)
       SELECT s.id, t, 900000, round(((t / 900 * 7919 + s.id * 104729) % 600000) / 100.0 - 3000, 2),
         round(10 + ((t / 900 + s.id) % 8000) / 100.0, 2), round((t - ?) / 900 * 187.31 + s.id, 2),
         round(-(t - ?) / 900 * 93.17 - s.id, 2)
       FROM q, streams s ORDER BY t, s.id`,
    ).run(yearFrom, yearTo, yearFrom, yearFrom);
    expect(db.prepare('SELECT COUNT(*) FROM buckets').pluck().get()).toBe(KEYS.length * 365 * 96);
    yearHash = hashYear(db);
    db.close();

    const sim = new SimSite(defaultSimConfig(), clock.now());
    servers = await startSimServers(sim, clock);
    writeFileSync(
      confFile,
      demoSiteYaml(servers, {
        httpHost: '127.0.0.1',
        httpPort: 0,
        dataDir,
        pollSeconds: 30,
        batteryBlocks: defaultSimConfig().battery.blocks.length,
      }),
    );
  }, 60_000);
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await servers?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const spawnDaemon = () =>
    spawnDaemonChild({ confFile, clock: { speed: SPEED, originSim, originReal }, stderr: 'ignore' });
  const readDb = <T>(fn: (db: Database) => T): T => readDaemonDb(dbFile, fn);

  it(`${KILLS} kills during start-up and polling, then a start that serves the year`, {
    timeout: 180_000,
  }, async () => {
    const r = rng(SEED);
    const versions: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      const d = spawnDaemon();
      child = d.proc;
      // the first kills fall in the start (the module loading, the file's open and migration),
      // the later ones after it listens, while it polls and closes
      if (k < 2) await new Promise((res) => setTimeout(res, 500 + r() * 3500));
      else {
        await d.started;
        await new Promise((res) => setTimeout(res, r() * 3000));
      }
      d.proc.kill('SIGKILL');
      await exited(d.proc);
      const { ok, version, hash } = readDb((db) => ({
        ok: db.pragma('integrity_check', { simple: true }),
        version: db.pragma('user_version', { simple: true }) as number,
        hash: hashYear(db),
      }));
      expect(ok).toBe('ok');
      expect([16, 17, 18, 19]).toContain(version);
      expect(hash).toBe(yearHash);
      versions.push(version);
    }
    // the later lives ran on the layout after: migrated once, never undone
    expect(versions.at(-1)).toBe(19);

    const d = spawnDaemon();
    child = d.proc;
    const url = await d.started;
    // the daemon's own closes: into the recent table, the year untouched in the archive
    await waitFor('a bucket closed after the restart', () =>
      readDb((db) => (db.prepare('SELECT COUNT(*) FROM buckets_recent').pluck().get() as number) > 0),
    );
    const creds = JSON.parse(readFileSync(join(dataDir, 'demo-credentials.json'), 'utf8'));
    const token = await partnerToken({ ...creds, tokenUrl: `${url}/oauth2/token` });
    // a day of the year, served from the stored buckets: every entry's power is the stored value
    const day = yearFrom + 200 * DAY_S;
    const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');
    const res = await getJson(
      `${url}/api/v1/devices/battery-1/telemetry?interval=${iso(day)}/${iso(day + DAY_S)}&resolution=PT15M`,
      token,
    );
    expect(res.status).toBe(200);
    const stored = readDb(
      (db) =>
        db
          .prepare(
            "SELECT b.power_W FROM buckets_all b JOIN streams s ON s.id = b.stream WHERE s.key = 'battery-1' AND b.start_s >= ? AND b.start_s < ? ORDER BY b.start_s",
          )
          .pluck()
          .all(day, day + DAY_S) as number[],
    );
    expect(stored).toHaveLength(96);
    expect(res.body.entries.map((e: { power_W: number }) => e.power_W)).toEqual(stored);
    d.proc.kill('SIGTERM');
    await exited(d.proc);
    expect(readDb((db) => hashYear(db))).toBe(yearHash);
  });
});
