/**
 * `sitegw backup` while the daemon runs and writes, restore from it, and a restart (how config
 * changes are applied) in the middle of a bucket: the bucket in progress is written at its
 * close, and its energy counters continue from the persisted state.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoSiteYaml } from '../../src/demo/default-site.js';
import { backupDatabase } from '../../src/ops/backup.js';
import { sqliteDriver } from '../../src/store/driver.js';
import { BUCKET_MS } from '../../src/telemetry/align.js';
import { sitegwCommand } from '../support/cli.js';
import { demoSite, waitFor } from '../support/demo.js';

// the build that suits this Node (src/store/driver.ts)
const BetterSqlite3 = sqliteDriver();

const ROOT = new URL('../../', import.meta.url).pathname;

interface Row {
  key: string;
  start_s: number;
  covered_ms: number;
  energy_in: number | null;
}

function buckets(file: string): Row[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return db
      .prepare(
        'SELECT s.key, b.start_s, b.covered_ms, b.energy_in FROM buckets_all b JOIN streams s ON s.id = b.stream ORDER BY s.key, b.start_s',
      )
      .all() as Row[];
  } finally {
    db.close();
  }
}

describe('backup, restore and restart', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-backup-'));

  beforeAll(async () => {
    demo = await demoSite({ speed: 60, history: 'P1D' });
  }, 120_000);
  afterAll(async () => {
    await demo?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  const dbFile = () => join(demo.dataDir, 'sitegw.db');

  it('backs up a consistent copy while the daemon writes buckets', async () => {
    const before = buckets(dbFile()).length;
    const out = join(dir, 'copy.db');
    const r = await backupDatabase(dbFile(), out);
    expect(r.bytes).toBeGreaterThan(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const copy = new BetterSqlite3(out, { readonly: true });
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
    copy.close();
    expect(buckets(out).length).toBeGreaterThanOrEqual(before);
    await expect(backupDatabase(dbFile(), out)).rejects.toThrow(/exists/);
  });

  it('sitegw backup --config FILE OUT from another process, and a restore that serves the same buckets', async () => {
    const ep = { host: '127.0.0.1', port: 9 };
    const yaml = join(dir, 'site.yaml');
    writeFileSync(
      yaml,
      demoSiteYaml(
        { inverter: ep, meter: ep },
        { httpHost: '127.0.0.1', httpPort: 0, dataDir: demo.dataDir, pollSeconds: 10, batteryBlocks: 2 },
      ),
    );
    const out = join(dir, 'cli.db');
    const r = spawnSync(...sitegwCommand(['backup', '--config', yaml, out]), { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^backup written: .*cli\.db \(\d+ bytes, checked\)\n$/);
    expect(r.status).toBe(0);
    expect(spawnSync(...sitegwCommand(['backup', '--config', yaml]), { cwd: ROOT }).status).toBe(2);

    // restore as the README says: the copy becomes sitegw.db of an empty data directory
    const restored = join(dir, 'restored');
    mkdirSync(restored);
    copyFileSync(out, join(restored, 'sitegw.db'));
    const backedUp = buckets(out);
    const again = await demoSite({ speed: 60, dataDir: restored });
    try {
      const now = buckets(join(restored, 'sitegw.db'));
      // every bucket of the backup is there after the restore (and the restored daemon adds new ones)
      const have = new Set(now.map((b) => `${b.key}@${b.start_s}`));
      expect(backedUp.filter((b) => !have.has(`${b.key}@${b.start_s}`))).toEqual([]);
      expect(backedUp.length).toBeGreaterThan(96);
    } finally {
      await again.stop();
      rmSync(restored, { recursive: true, force: true });
    }
  }, 60_000);

  it('a restart in the middle of a bucket: the bucket is written at its close, its counters continue', async () => {
    const clock = demo.clock;
    // the middle of the bucket that is open now
    const open = Math.floor(clock.now() / BUCKET_MS) * BUCKET_MS;
    const mid = open + BUCKET_MS / 2;
    if (clock.now() < mid) await clock.sleep(mid - clock.now());
    const spanning = Math.floor(clock.now() / BUCKET_MS) * BUCKET_MS;
    const stoppedAt = clock.now();
    // what the stop persisted: the lifetime counts of every stream up to its last reading, read
    // before the new daemon runs (under load its start can take until the next bucket close,
    // which writes the counts again)
    let saved = new Map<string, number>();
    await demo.restartDaemon(() => {
      const db = new BetterSqlite3(dbFile(), { readonly: true });
      saved = new Map(
        (
          db.prepare('SELECT s.key, e.in_wh FROM energy_state e JOIN streams s ON s.id = e.stream').all() as {
            key: string;
            in_wh: number;
          }[]
        ).map((r) => [r.key, r.in_wh]),
      );
      db.close();
    });
    await waitFor(
      'the spanning bucket closed',
      () => buckets(dbFile()).some((b) => b.start_s * 1000 === spanning && b.key === 'grid-meter__GRID_METER_DERIVED'),
      60_000,
    );
    const rows = buckets(dbFile());
    const keys = [...new Set(rows.filter((b) => b.start_s * 1000 === spanning - BUCKET_MS).map((b) => b.key))];
    expect(keys.length).toBeGreaterThan(3);
    for (const key of keys) {
      const b = rows.find((r) => r.key === key && r.start_s * 1000 === spanning);
      expect({ key, written: b !== undefined }).toEqual({ key, written: true });
      // the part before the restart counts too (the stop saved the bucket in progress): the
      // bucket holds more than what was left of it after the stop
      expect(b!.covered_ms, key).toBeGreaterThan(spanning + BUCKET_MS - stoppedAt);
      const prev = rows.find((r) => r.key === key && r.start_s * 1000 === spanning - BUCKET_MS)!;
      const inWh = saved.get(key);
      if (b!.energy_in === null || inWh === undefined) continue;
      // the count at the stop lies between the previous bucket's end and this bucket's end
      expect(prev.energy_in!).toBeLessThanOrEqual(inWh + 0.01);
      expect(b!.energy_in).toBeGreaterThanOrEqual(inWh - 0.01);
    }
    expect(existsSync(dbFile())).toBe(true);
  }, 90_000);
});
