/**
 * Retention through the daemon (docs/configuration.md "Retention: `retention:`"): `sitegw run`'s
 * daemon as its own process (test/crash/daemon-child.ts, on a clock 600 times real time shared
 * with the simulator in this process; node's default flags, which start it in half the time of
 * the unit's), on a database that holds four months of old 15-minute buckets for four devices,
 * written through the store's own functions before its first start. It runs once without
 * retention (the answers before), then with `retention.fifteenMinuteYears: 1`:
 * - the old buckets are rolled into hour rows, and the API's PT1H and P1D answers for those days
 *   are byte for byte what they were before;
 * - a SIGKILL while the pass is partway (some hours rolled, some buckets left) loses and doubles
 *   nothing: no hour is in both tables, the database is intact, and after the restart the pass
 *   ends with the same answers.
 */
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
import { type BucketRow, insertBuckets } from '../../src/store/buckets.js';
import { openDatabase } from '../../src/store/db.js';
import { sqliteDriver } from '../../src/store/driver.js';
import { streamKey } from '../../src/store/streams.js';
import { partnerToken } from '../support/auth.js';
import { bucketRow } from '../support/bucket-row.js';
import { waitFor } from '../support/demo.js';
import { type DaemonChild, exited, readDb as readDaemonDb, spawnDaemonChild } from '../support/run-daemon.js';

const BetterSqlite3 = sqliteDriver();
const SPEED = 600;
const DAY = 86_400_000;
/** old days of 15-minute buckets per stream: 18 steps of retention's seven days each */
const OLD_DAYS = 120;
const STREAMS = 4;

describe('retention through the daemon', () => {
  let servers: SimServers;
  const dataDir = mkdtempSync(join(tmpdir(), 'sitegw-retention-'));
  const dbFile = join(dataDir, 'sitegw.db');
  const confFile = join(dataDir, 'site.yaml');
  const originReal = Date.now();
  const originSim = Date.UTC(2026, 5, 1, 4, 0, 0);
  const clock = new ScaledClock(SPEED, originSim);
  // whole UTC days more than a year before the daemon's now: retention's to roll
  const oldFrom = Math.floor((originSim - 365 * DAY - (OLD_DAYS + 20) * DAY) / DAY) * DAY;
  const oldTo = oldFrom + OLD_DAYS * DAY;
  let yaml = '';

  beforeAll(async () => {
    const sim = new SimSite(defaultSimConfig(), clock.now());
    servers = await startSimServers(sim, clock);
    yaml = demoSiteYaml(servers, {
      httpHost: '127.0.0.1',
      httpPort: 0,
      dataDir,
      pollSeconds: 30,
      batteryBlocks: defaultSimConfig().battery.blocks.length,
    });
    writeFileSync(confFile, yaml);
  });
  afterAll(async () => {
    const p = child?.proc;
    if (p && p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    await servers?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** the daemon with node's default flags, its log at info; resolves its URL once it listens */
  let child: DaemonChild | null = null;
  const out = () => child?.out() ?? '';
  const start = async (): Promise<string> => {
    child = spawnDaemonChild({
      confFile,
      clock: { speed: SPEED, originSim, originReal },
      env: { SITEGW_LOG_LEVEL: 'info' },
    });
    return await child.started;
  };
  const stop = async (signal: NodeJS.Signals) => {
    const p = child!.proc;
    p.kill(signal);
    await exited(p);
    if (signal === 'SIGTERM') expect(p.exitCode).toBe(0);
  };
  const readDb = <T>(fn: (db: Database) => T): T => readDaemonDb(dbFile, fn);
  const oldBuckets = (db: Database) =>
    db
      .prepare('SELECT COUNT(*) FROM buckets_all WHERE start_s < ?')
      .pluck()
      .get(oldTo / 1000) as number;

  /** the API's PT1H and P1D answers over the old days, per stream, as sent */
  const answers = async (url: string, ids: string[]): Promise<Record<string, string>> => {
    const creds = JSON.parse(readFileSync(join(dataDir, 'demo-credentials.json'), 'utf8'));
    const token = await partnerToken({ ...creds, tokenUrl: `${url}/oauth2/token` });
    const got: Record<string, string> = {};
    const interval = `${new Date(oldFrom).toISOString()}/${new Date(oldTo).toISOString()}`;
    for (const id of ids)
      for (const resolution of ['PT1H', 'P1D']) {
        const r = await fetch(
          `${url}/api/v1/devices/${encodeURIComponent(id)}/telemetry?interval=${interval}&resolution=${resolution}&include=default,energy`,
          { headers: { authorization: `Bearer ${token}` } },
        );
        expect(r.status).toBe(200);
        got[`${id} ${resolution}`] = await r.text();
      }
    return got;
  };

  it('rolls old buckets into hours with the same PT1H and P1D answers, and a SIGKILL partway loses and doubles nothing', {
    timeout: 120_000,
  }, async () => {
    // 1. before the first start: the database with four months of old buckets for four of the
    // site's devices, through the store
    const ids = ['inverter', 'battery-1', 'battery-2', 'house-meter'];
    {
      const db = openDatabase(dbFile);
      try {
        const rows: BucketRow[] = [];
        for (const [n, id] of ids.entries()) {
          const stream = streamKey(db, id);
          for (let i = 0; i < OLD_DAYS * 96; i++)
            rows.push(
              bucketRow({
                stream,
                startS: oldFrom / 1000 + i * 900,
                // whole watts, energy in quarters of a Wh: means and sums are exact in binary
                power_W: ((i * 53 + n * 7) % 3000) - 1500,
                soc: 20 + ((i * 3) % 70),
                energyIn: 10_000 * (n + 1) + i * 12.25,
                energyOut: -(5_000 * (n + 1) + i * 3.5),
              }),
            );
        }
        insertBuckets(db, rows);
      } finally {
        db.close();
      }
    }
    expect(readDb(oldBuckets)).toBe(STREAMS * OLD_DAYS * 96);

    // 2. without retention: the answers before, and a bucket closed (retention rolls only what
    // lies before the newest closed one, which a restart finds saved)
    const before = await answers(await start(), ids);
    const entries = (k: string) => (JSON.parse(before[k]!) as { entries: unknown[] }).entries.length;
    for (const id of ids) {
      expect(entries(`${id} PT1H`), id).toBe(OLD_DAYS * 24);
      expect(entries(`${id} P1D`), id).toBeGreaterThanOrEqual(OLD_DAYS - 1);
    }
    expect(Object.values(before).some((t) => t.includes('energy_Wh_increment'))).toBe(true);
    expect(Object.values(before).some((t) => t.includes('power_W'))).toBe(true);
    await waitFor(
      'a closed bucket',
      () =>
        readDb((db) =>
          db
            .prepare('SELECT COUNT(*) FROM buckets_all WHERE start_s >= ?')
            .pluck()
            .get(oldTo / 1000),
        ),
      30_000,
    );
    await stop('SIGTERM');

    // 3. retention on; SIGKILL once the pass is partway
    writeFileSync(confFile, `${yaml}\nretention:\n  fifteenMinuteYears: 1\n`);
    await start();
    const watch = new BetterSqlite3(dbFile, { readonly: true, fileMustExist: true });
    const rolled = watch.prepare('SELECT rolled_until FROM retention_state WHERE id = 1').pluck();
    try {
      await waitFor(
        'a partial roll-up',
        () => {
          const left = oldBuckets(watch);
          if (left === 0) throw new Error('the pass ended before it was seen partway');
          return (rolled.get() as number) > 0 && left < STREAMS * OLD_DAYS * 96 && left;
        },
        60_000,
      );
    } finally {
      watch.close();
    }
    await stop('SIGKILL');
    readDb((db) => {
      expect(db.prepare('PRAGMA integrity_check').pluck().get()).toBe('ok');
      const left = oldBuckets(db);
      const hours = db.prepare('SELECT COUNT(*) FROM buckets_hour').pluck().get() as number;
      expect(left).toBeGreaterThan(0);
      expect(hours).toBeGreaterThan(0);
      // every old quarter hour is in exactly one of the two tables: four buckets per hour row
      expect(left + 4 * hours).toBe(STREAMS * OLD_DAYS * 96);
      expect(
        db
          .prepare(
            'SELECT COUNT(*) FROM buckets_all b JOIN buckets_hour h ON b.stream = h.stream AND b.start_s >= h.start_s AND b.start_s < h.start_s + 3600',
          )
          .pluck()
          .get(),
      ).toBe(0);
    });

    // 4. after the restart the pass ends, and the answers are those of before
    const url = await start();
    await waitFor(
      'the pass done',
      () => out().includes('old buckets rolled up into hours') && readDb(oldBuckets) === 0,
      60_000,
    );
    readDb((db) => {
      expect(db.prepare('SELECT COUNT(*) FROM buckets_hour').pluck().get()).toBe(STREAMS * OLD_DAYS * 24);
      expect(db.prepare('PRAGMA integrity_check').pluck().get()).toBe('ok');
    });
    const after = await answers(url, ids);
    for (const k of Object.keys(before)) expect(after[k] === before[k], `${k}: the same bytes`).toBe(true);
    await stop('SIGTERM');
  });
});
