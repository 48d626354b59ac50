import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ManualClock } from '../../src/core/clock.js';
import { EventBus } from '../../src/core/events.js';
import { silentLogger } from '../../src/core/log.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { Site } from '../../src/site/site.js';
import { type Database, openDatabase } from '../../src/store/db.js';
import { readAfter } from '../../src/store/outbox.js';
import { writeSeqCeiling } from '../../src/store/seq-ceiling.js';
import { Uplink } from '../../src/uplink/feature.js';

/**
 * The demo site's Uplink, started, over a fresh SQLite file (its outbox counter seeded by the
 * migration from the real clock); its broker address refuses, so nothing is published and the
 * outbox shows what would be. What it opens is closed by the functions it pushes to `cleanups`.
 */
export function offlineUplink(
  o: { start: number; ceiling?: number; log?: Logger; plausibleFrom?: number },
  cleanups: (() => unknown)[],
) {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-offline-uplink-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const seqFile = join(dir, 'uplink-seq');
  if (o.ceiling !== undefined) writeSeqCeiling(seqFile, o.ceiling);
  const config = demoSiteConfig(
    { inverter: { host: '127.0.0.1', port: 1502 }, meter: { host: '127.0.0.1', port: 1503 } },
    {
      httpHost: '127.0.0.1',
      httpPort: 0,
      dataDir: dir,
      pollSeconds: 10,
      batteryBlocks: 1,
      uplinkUrl: 'mqtt://127.0.0.1:1',
    },
  );
  const db: Database = openDatabase(join(dir, 'sitegw.db'));
  cleanups.push(() => db.close());
  const site = new Site(config);
  const clock = new ManualClock(o.start);
  const bus = new EventBus();
  const from = o.plausibleFrom;
  const u = new Uplink({
    config: config.uplink!,
    db,
    site,
    bus,
    clock,
    log: o.log ?? silentLogger(),
    socScale: 'percent',
    version: 'test',
    seqFile,
    ...(from === undefined ? {} : { clockPlausible: () => clock.now() >= from }),
  });
  u.start();
  cleanups.push(() => u.stop());
  const seqs = () => readAfter(db, 0, 1000).map((r) => r.seq);
  return { u, db, site, clock, bus, seqs, seqFile };
}
