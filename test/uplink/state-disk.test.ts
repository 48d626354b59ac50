/**
 * The uplink's state messages (topology, availability) on a data disk that refuses writes
 * (docs/design.md "Field faults: what the numbers survive"): they wait in memory, the latest per
 * topic, and go into the outbox with the next state message once the disk takes writes; a
 * topology change, sent only when the topology changes, is not lost. `query_only` makes every
 * write fail with SQLITE_READONLY, a storage fault, on a real database. The Uplink over a real
 * SQLite file; its broker address refuses, so nothing is published.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { EventBus } from '../../src/core/events.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { Site } from '../../src/site/site.js';
import { openDatabase } from '../../src/store/db.js';
import { readAfter } from '../../src/store/outbox.js';
import { writeSeqCeiling } from '../../src/store/seq-ceiling.js';
import { Uplink } from '../../src/uplink/feature.js';

const NOW = Date.parse('2026-11-27T10:00:00Z');

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function uplink() {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-state-disk-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const seqFile = join(dir, 'uplink-seq');
  writeSeqCeiling(seqFile, NOW);
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
  const db = openDatabase(join(dir, 'sitegw.db'));
  cleanups.push(() => db.close());
  const site = new Site(config);
  const bus = new EventBus();
  const clock = new ManualClock(NOW);
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l).msg) });
  const u = new Uplink({
    config: config.uplink!,
    db,
    site,
    bus,
    clock,
    log,
    socScale: 'percent',
    version: 'test',
    seqFile,
  });
  u.start();
  cleanups.push(() => u.stop());
  return { db, site, bus, clock, lines };
}

describe('uplink state messages on a disk that refuses writes', () => {
  it('wait in memory, the latest per topic, and reach the outbox once writes work; the topology change is kept', async () => {
    const { db, site, bus, clock } = uplink();
    const rows = () => readAfter(db, 0, 1000).map((r) => ({ topic: r.topic, body: JSON.parse(r.body) }));
    expect(rows().map((r) => r.topic)).toEqual(['topology']);

    db.pragma('query_only = ON');
    site.learn('inverter', { pvModules: 2 });
    bus.emit('streamsChanged', { deviceId: 'inverter' });
    for (const online of [false, true, false])
      bus.emit('deviceHealth', { deviceId: 'inverter', online, lastSeen: online ? clock.now() : null });
    db.pragma('query_only = OFF');
    bus.emit('deviceHealth', { deviceId: 'grid-meter', online: true, lastSeen: clock.now() });

    const after = rows();
    // before: the refused topology change was dropped (never sent again until the next change)
    expect(after.map((r) => r.topic)).toEqual([
      'topology',
      'topology',
      'devices/inverter/availability',
      'devices/grid-meter/availability',
    ]);
    expect(JSON.stringify(after[1]!.body)).toContain('inverter__pv2');
    expect(after[2]!.body).toMatchObject({ online: false });
  });

  it('says once, not every minute, that the outbox bounds cannot be applied', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const { db, lines } = uplink();
      db.pragma('query_only = ON');
      vi.advanceTimersByTime(5 * 60_000);
      expect(lines.filter((l) => /applying the outbox bounds failed/.test(l))).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
