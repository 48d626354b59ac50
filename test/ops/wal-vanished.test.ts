/**
 * The WAL removed while the daemon runs (issue 41, finding 7: /healthz stayed ok, and everything
 * written since the last checkpoint lived only in the deleted file, lost at the next start): the
 * storage look notices it, checkpoints the deleted WAL's frames into the database and starts a new
 * WAL, and health says so. Every row written before and after the removal is in the file the next
 * process opens.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { Daemon } from '../../src/main.js';
import { openReadOnly } from '../../src/store/db.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('a WAL removed while running', () => {
  it('is noticed in health and repaired without losing a stored row', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sitegw-wal-'));
    dirs.push(dataDir);
    const ep = { host: '127.0.0.1', port: 9 };
    const config = demoSiteConfig(
      { inverter: ep, meter: ep },
      { httpHost: '127.0.0.1', httpPort: 0, dataDir, pollSeconds: 10, batteryBlocks: 1 },
    );
    const daemon = await Daemon.start({
      config,
      clock: new ManualClock(Date.UTC(2026, 5, 1, 12)),
      log: pino({ level: 'silent' }),
      listen: false,
    });
    const file = join(dataDir, 'sitegw.db');
    const add = daemon.ctx.db.prepare('INSERT INTO streams (key) VALUES (?)');
    try {
      add.run('before__removal');
      expect(existsSync(`${file}-wal`)).toBe(true);
      rmSync(`${file}-wal`);
      rmSync(`${file}-shm`, { force: true });
      add.run('after__removal');
      daemon.ctx.ops.storage.check();
      const health = (await daemon.app.inject({ method: 'GET', url: '/healthz' })).json() as { problems: string[] };
      expect(health.problems.join(' ')).toMatch(/sitegw\.db-wal was removed while running/);
      expect(existsSync(`${file}-wal`)).toBe(true);
      // the database file alone holds both rows now: a kill at this moment loses neither
      const alone = join(mkdtempSync(join(tmpdir(), 'sitegw-wal-alone-')), 'sitegw.db');
      dirs.push(dirname(alone));
      copyFileSync(file, alone);
      const copy = openReadOnly(alone);
      expect(copy.prepare("SELECT key FROM streams WHERE key LIKE '%removal'").pluck().all().sort()).toEqual([
        'after__removal',
        'before__removal',
      ]);
      copy.close();
      add.run('after__repair');
    } finally {
      await daemon.stop().catch(() => undefined);
    }
    const db = openReadOnly(file);
    const keys = db.prepare("SELECT key FROM streams WHERE key LIKE '%removal' OR key LIKE '%repair'").pluck().all();
    db.close();
    expect(keys.sort()).toEqual(['after__removal', 'after__repair', 'before__removal']);
  }, 60_000);
});
