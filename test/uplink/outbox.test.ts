import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ClosedBucket, EventBus } from '../../src/core/events.js';
import type { StreamDef } from '../../src/core/streams.js';
import { type Database, openDatabase } from '../../src/store/db.js';
import { enqueue, outboxDrops, outboxStats, readAfter, remove, trim, withSeq } from '../../src/store/outbox.js';
import { oldestPendingUplink } from '../../src/store/retention.js';
import { Bucketer } from '../../src/telemetry/bucketer.js';

const MIN = 60_000;
const T0 = Date.parse('2026-11-23T00:00:00Z');
const at = (minutes: number) => T0 + minutes * MIN;
const meter: StreamDef = {
  id: 'gm__GRID_METER_DERIVED',
  deviceId: 'gm',
  deviceKind: 'meter',
  channels: ['power_W', 'state'],
};
const count = (db: Database, table: string) => db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
const msg = (topic: string, n: number) => ({ topic, body: `{"v":1,"n":${n}}`, retain: false });

function bucketer(db: Database, bus?: EventBus): Bucketer {
  const b = new Bucketer({ db, streams: [meter], pollPeriodMs: 10_000, bus });
  b.start();
  for (let s = 0; s < 40 * 60; s += 10)
    b.ingest({ streamId: meter.id, ts: at(s / 60), values: { power_W: 100, state: 'ok' } });
  return b;
}

describe('bucket close hook (the outbox row commits with the bucket)', () => {
  it('runs inside the close transaction: its rows and the buckets are written together', () => {
    const db = openDatabase(':memory:');
    const bus = new EventBus();
    const b = bucketer(db, bus);
    const seen: ClosedBucket[][] = [];
    bus.inTransaction('bucketsClosing', (closed) => {
      seen.push([...closed]);
      expect(db.inTransaction).toBe(true);
      enqueue(db, [msg('telemetry', closed.length)], 0);
    });
    b.closeUntil(at(30));
    expect(seen.map((c) => c.map((x) => x.start))).toEqual([[at(0), at(15)]]);
    expect(count(db, 'buckets_all')).toBe(2);
    expect(count(db, 'uplink_outbox')).toBe(1);
  });

  it('a failing hook rolls the bucket write back, emits nothing, and the next close writes the buckets', () => {
    const db = openDatabase(':memory:');
    const bus = new EventBus();
    const events: number[] = [];
    bus.on('bucketsClosed', (e) => events.push(e.start));
    const b = bucketer(db, bus);
    let fail = true;
    bus.inTransaction('bucketsClosing', (closed) => {
      enqueue(db, [msg('telemetry', closed.length)], 0);
      if (fail) throw new Error('disk full');
    });
    expect(() => b.closeUntil(at(30))).toThrow('disk full');
    expect(count(db, 'buckets_all')).toBe(0);
    expect(count(db, 'uplink_outbox')).toBe(0);
    expect(events).toEqual([]);
    fail = false;
    const out = b.closeUntil(at(30));
    expect(out.map((x) => x.start)).toEqual([at(0), at(15)]);
    expect(count(db, 'buckets_all')).toBe(2);
    expect(count(db, 'uplink_outbox')).toBe(1);
    expect(events).toEqual([at(0), at(15)]);
  });

  it('an unregistered hook no longer runs', () => {
    const db = openDatabase(':memory:');
    const bus = new EventBus();
    const b = bucketer(db, bus);
    let calls = 0;
    const off = bus.inTransaction('bucketsClosing', () => void calls++);
    off();
    b.closeUntil(at(30));
    expect(calls).toBe(0);
  });
});

describe('outbox', () => {
  it('numbers messages upward from above the creation time, never reusing a number after deletes', () => {
    const before = Date.now();
    const db = openDatabase(':memory:');
    const [a, b2] = enqueue(db, [msg('t', 1), msg('t', 2)], 5);
    expect(a!).toBeGreaterThan(before);
    expect(b2).toBe(a! + 1);
    remove(db, [a!, b2!]);
    const [c] = enqueue(db, [msg('t', 3)], 6);
    expect(c).toBe(b2! + 1);
    expect(readAfter(db, 0, 10).map((r) => r.seq)).toEqual([c]);
  });

  it('puts seq first in the payload and keeps the body otherwise as written', () => {
    expect(JSON.parse(withSeq(42, '{"v":1,"x":"y"}'))).toEqual({ seq: 42, v: 1, x: 'y' });
  });

  it('reads oldest first after a cursor', () => {
    const db = openDatabase(':memory:');
    const seqs = enqueue(
      db,
      [1, 2, 3, 4].map((n) => msg('t', n)),
      0,
    );
    expect(readAfter(db, seqs[1]!, 10).map((r) => r.seq)).toEqual(seqs.slice(2));
    expect(readAfter(db, 0, 2).map((r) => JSON.parse(r.body).n)).toEqual([1, 2]);
  });

  it('drops by age, then the oldest past the size bound, and counts both', () => {
    const db = openDatabase(':memory:');
    enqueue(db, [msg('t', 1), msg('t', 2)], 1000);
    enqueue(db, [msg('t', 3), msg('t', 4), msg('t', 5)], 2000);
    const size = Buffer.byteLength(msg('t', 5).body);
    // age drops 1 and 2; the size bound then keeps the newest two
    expect(trim(db, 1500, 2 * size, 9000)).toEqual({ byAge: 2, bySize: 1, telemetry: [] });
    expect(readAfter(db, 0, 10).map((r) => JSON.parse(r.body).n)).toEqual([4, 5]);
    expect(outboxDrops(db)).toEqual({ byAge: 2, bySize: 1, lastAt: 9000 });
    expect(outboxStats(db)).toEqual({ depth: 2, bytes: 2 * size, oldestAt: 2000 });
    expect(trim(db, 0, 10 * size, 9500)).toEqual({ byAge: 0, bySize: 0, telemetry: [] });
    expect(outboxDrops(db).lastAt).toBe(9000);
  });

  it('a size bound smaller than one message empties the outbox', () => {
    const db = openDatabase(':memory:');
    enqueue(db, [msg('t', 1)], 1000);
    expect(trim(db, 0, 3, 1)).toEqual({ byAge: 0, bySize: 1, telemetry: [] });
    expect(outboxStats(db).depth).toBe(0);
  });

  it("a 200-device site's telemetry message (117 kB) costs a few pages a close, not one per 4 kB of it, and reads back as written", () => {
    const dir = mkdtempSync(join(tmpdir(), 'sitegw-outbox-'));
    try {
      const file = join(dir, 'sitegw.db');
      const db = openDatabase(file);
      // 272 entries as payloads.ts writes them: the same keys again and again, values that differ
      const entries = Array.from({ length: 272 }, (_, i) => ({
        deviceId: `bat-${i >> 4}-${i & 15}`,
        interval: '2026-06-21T10:00:00Z/2026-06-21T10:15:00Z',
        values: { power_W: 1234.56 + i * 7.31, soc: 50 + (i % 50) / 3, energy_Wh_increment: 1_000_000 + i * 1013.17 },
      }));
      const body = JSON.stringify({ v: 2, siteId: 'disk', time: '2026-06-21T10:00:00Z', entries });
      const wal = () => statSync(`${file}-wal`).size;
      enqueue(db, [{ topic: 'telemetry', body: '{"v":2}', retain: false }], 0);
      const before = wal();
      const [seq] = enqueue(db, [{ topic: 'telemetry', body, retain: false }], 1);
      const pages = (wal() - before) / (4096 + 24);
      // as text: more than 25 overflow pages; deflated, a few (and the row's leaf, sqlite_sequence)
      expect(pages).toBeLessThanOrEqual(8);
      expect(readAfter(db, 0, 10).map((r) => r.body)).toEqual(['{"v":2}', body]);
      // retention still sees the oldest telemetry waiting in it
      expect(oldestPendingUplink(db, 'telemetry')).toBe(Date.parse('2026-06-21T10:00:00Z'));
      remove(db, [seq!]);
      expect(oldestPendingUplink(db, 'telemetry')).toBeNull();
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
