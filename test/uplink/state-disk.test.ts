/**
 * The uplink's state messages (topology, availability) on a data disk that refuses writes
 * (docs/design.md "Field faults: what the numbers survive"): they wait in memory, the latest per
 * topic, and go into the outbox with the next state message once the disk takes writes; a
 * topology change, sent only when the topology changes, is not lost. `query_only` makes every
 * write fail with SQLITE_READONLY, a storage fault, on a real database. The Uplink over a real
 * SQLite file; its broker address refuses, so nothing is published.
 */
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readAfter } from '../../src/store/outbox.js';
import { offlineUplink } from '../support/offline-uplink.js';

const NOW = Date.parse('2026-11-27T10:00:00Z');

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function uplink() {
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l).msg) });
  return { ...offlineUplink({ start: NOW, ceiling: NOW, log }, cleanups), lines };
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
