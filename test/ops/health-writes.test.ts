/**
 * What /healthz says about a failed database write is the same sentence whichever writer noted it
 * last: the storage watch's probe, or a token, bucket or grid event the disk refused (they call
 * Health.noteWrite with SQLite's error alone). On a loaded machine a grid event or a bucket close
 * can fail after the watch's look and before the installer's request: the answer then said only
 * "database or disk is full", without the file or the errno (test/e2e/disk-full failed on it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { EventBus } from '../../src/core/events.js';
import { FeatureList } from '../../src/core/feature.js';
import { silentLogger } from '../../src/core/log.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { OpsFeature } from '../../src/ops/feature.js';
import { Site } from '../../src/site/site.js';
import { sqliteDriver } from '../../src/store/driver.js';

const dirs: string[] = [];
const dbs: { close(): void }[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function ops() {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitegw-health-writes-'));
  dirs.push(dataDir);
  const dbFile = join(dataDir, 'sitegw.db');
  const config = demoSiteConfig(
    { inverter: { host: '127.0.0.1', port: 1502 }, meter: { host: '127.0.0.1', port: 1503 } },
    { httpHost: '127.0.0.1', httpPort: 0, dataDir, pollSeconds: 10, batteryBlocks: 1 },
  );
  const log = silentLogger();
  const db = new (sqliteDriver())(dbFile);
  dbs.push(db);
  const feature = new OpsFeature({
    site: new Site(config),
    db,
    dbFile,
    bus: new EventBus(),
    clock: new ManualClock(Date.parse('2026-11-27T10:00:00Z')),
    log,
    version: 'test',
    bucketer: { stats: () => ({}) as never, lifetime: () => undefined },
    scheduler: { lastTickAt: null, tickMs: 10_000, stop: async () => undefined },
    features: new FeatureList(log),
    replaced: null,
    env: {},
  });
  return { health: feature.health, dbFile };
}

const full = () => Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
const writeProblem = (r: { problems: string[] }) => r.problems.find((p) => p.startsWith('writing to the database'));

describe('health names the database file for every failed write', () => {
  it("a writer's bare SQLite error is told with the file, SQLite's code and the free space", () => {
    const { health, dbFile } = ops();
    health.noteWrite(full());
    const r = health.report();
    expect(r.status).toBe('failing');
    expect(writeProblem(r)).toMatch(
      new RegExp(
        `^writing to the database failed: writing ${dbFile} failed: SQLITE_FULL \\(database or disk is full\\); \\d+ bytes free there$`,
      ),
    );
    health.noteWrite();
    expect(health.report().problems.some((p) => p.startsWith('writing to the database'))).toBe(false);
  });

  it("the watch's sentence, then a grid event's bare error: still the file, not SQLite's words alone", () => {
    const { health, dbFile } = ops();
    health.noteWrite(full(), `writing ${dbFile} failed: SQLITE_FULL (database or disk is full); 0 bytes free there`);
    health.noteWrite(full());
    expect(writeProblem(health.report())).toContain(dbFile);
  });
});
