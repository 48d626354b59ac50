/**
 * Issue 46: a close's telemetry is not copied into the outbox; its recent rows carry the seq and
 * `written` (schema 19), and the drainer rebuilds the message from them (uplink/pending.ts). Over
 * real SQLite files with the real Bucketer, the stamping the Uplink does (uplink/seq-counter.ts)
 * and the drain's reading and acknowledging (Pending).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { type ClosedBucket, EventBus } from '../../src/core/events.js';
import { demoSiteConfig } from '../../src/demo/default-site.js';
import { Site } from '../../src/site/site.js';
import { type Database, openDatabase } from '../../src/store/db.js';
import { sqliteDriver } from '../../src/store/driver.js';
import { enqueue, outboxDrops, readAfter, trim } from '../../src/store/outbox.js';
import { holdFold } from '../../src/store/recent-buckets.js';
import { oldestPendingUplink } from '../../src/store/retention.js';
import { outboxSeq } from '../../src/store/seq-ceiling.js';
import { sentSeq } from '../../src/store/uplink-telemetry.js';
import { Bucketer } from '../../src/telemetry/bucketer.js';
import { payloadContext, telemetryBodies } from '../../src/uplink/payloads.js';
import { Pending, SENT_SAVE_MS } from '../../src/uplink/pending.js';
import { SeqCounter } from '../../src/uplink/seq-counter.js';

const MIN = 60_000;
const T0 = Date.parse('2026-11-23T00:00:00Z');
const DAY = 86_400_000;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const count = (db: Database, sql: string) => db.prepare(sql).pluck().get() as number;

/** The demo site over a fresh file, its bucketer fed a reading a minute, and the Uplink's stamping on its closes. */
function site(o: { maxAgeDays?: number; hold?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-tel-buckets-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'sitegw.db');
  const config = demoSiteConfig(
    { inverter: { host: '127.0.0.1', port: 1502 }, meter: { host: '127.0.0.1', port: 1503 } },
    { httpHost: '127.0.0.1', httpPort: 0, dataDir: dir, pollSeconds: 60, batteryBlocks: 1 },
  );
  const s = new Site(config);
  const clock = new ManualClock(T0);
  const setClock = (t: number) => clock.step(t - clock.now());
  const ctx = payloadContext(s, 'percent');
  const open = () => {
    const db = openDatabase(file);
    const bus = new EventBus();
    const seqs = new SeqCounter(db, () => clock.now());
    const closes: { closed: ClosedBucket[]; seqs: number[] }[] = [];
    let failNext = false;
    bus.inTransaction('bucketsClosing', (closed) => {
      const stamped = seqs.stampClose(ctx, closed, clock.now());
      // a listener after the uplink's that fails rolls the whole close back
      if (failNext) {
        failNext = false;
        throw new Error('disk full');
      }
      closes.push({ closed: [...closed], seqs: stamped });
    });
    // as the Uplink does: a close's seqs are taken once its commit is known
    bus.on('bucketsClosed', () => seqs.confirm());
    const b = new Bucketer({ db, streams: s.streams(), pollPeriodMs: 60_000, bus, keepRealMs: 0 });
    b.start();
    const pending = new Pending(db, ctx, () => clock.now());
    if (o.hold !== false)
      holdFold(db, { through: () => pending.through, now: () => clock.now(), maxAgeMs: (o.maxAgeDays ?? 30) * DAY });
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      holdFold(db, null);
      b.stop();
      db.close();
    };
    cleanups.push(close);
    return { db, bus, seqs, closes, b, pending, close, failOnce: () => void (failNext = true) };
  };
  let now = open();
  /** readings a minute apart up to `until`, closing every quarter hour */
  const run = (until: number) => {
    for (let t = clock.now(); t < until; t += MIN) {
      setClock(t);
      for (const st of s.streams())
        now.b.ingest({ streamId: st.id, ts: t, values: { power_W: 100 + ((t / MIN) % 37), soc: 50 } });
      if ((t + MIN) % (15 * MIN) === 0) {
        setClock(t + MIN);
        now.b.closeUntil(t + MIN);
      }
    }
    setClock(until);
  };
  const restart = () => {
    now.close();
    now = open();
    return now;
  };
  return { ctx, clock, setClock, run, restart, file, get: () => now };
}

describe('telemetry read from the buckets', () => {
  it('a close writes no outbox row; the drain reads the body the close would have enqueued, byte for byte', () => {
    const t = site();
    t.run(T0 + 60 * MIN);
    const { db, closes, pending } = t.get();
    expect(count(db, 'SELECT COUNT(*) FROM uplink_outbox')).toBe(0);
    const seqs = closes.flatMap((c) => c.seqs);
    expect(seqs).toHaveLength(4);
    // one per message, by one, in the order written
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
    const rows = pending.read(0, 100);
    expect(rows.map((r) => r.seq)).toEqual(seqs);
    const expected = closes.flatMap((c) => telemetryBodies(t.ctx, c.closed));
    expect(rows.map((r) => r.body)).toEqual(expected.map((m) => m.body));
    expect(rows.every((r) => r.topic === 'telemetry' && !r.retain && r.telemetry)).toBe(true);
    // written: the close's time, growing with seq
    expect(rows.map((r) => r.createdAt)).toEqual([15, 30, 45, 60].map((m) => T0 + m * MIN));
    expect(pending.stats()).toMatchObject({ depth: 4, bytes: 0, oldestAt: T0 + 15 * MIN });
  });

  it('one seq space: outbox messages continue above the telemetry, and a restart continues above both', () => {
    const t = site();
    t.run(T0 + 30 * MIN);
    let { db, seqs } = t.get();
    const top = seqs.current();
    seqs.beforeOutbox(1);
    const [state] = enqueue(db, [{ topic: 'status/x', body: '{"v":2}', retain: true }], t.clock.now());
    expect(state).toBe(top + 1);
    t.run(T0 + 45 * MIN);
    const { closes } = t.get();
    expect(closes.at(-1)!.seqs).toEqual([top + 2]);
    ({ db, seqs } = t.restart());
    expect(seqs.current()).toBe(top + 2);
    // the merged read: telemetry, the state message, telemetry, in seq order
    expect(
      t
        .get()
        .pending.read(0, 100)
        .map((r) => [r.seq, r.telemetry]),
    ).toEqual([
      [top - 1, true],
      [top, true],
      [top + 1, false],
      [top + 2, true],
    ]);
  });

  it('a close that rolls back hands its seqs out again; a committed one overwritten by a later close never does', () => {
    const t = site();
    t.run(T0 + 15 * MIN);
    const { db, closes, seqs, failOnce, b } = t.get();
    const first = closes[0]!.seqs[0]!;
    failOnce();
    expect(() => t.run(T0 + 30 * MIN)).toThrow('disk full');
    b.closeUntil(T0 + 30 * MIN);
    // no hole: the rolled-back close's seq went to the close that committed
    expect(closes.map((c) => c.seqs)).toEqual([[first], [first + 1]]);
    // the quarter hour written again (a re-close): its rows lose their seq, which stays taken
    db.prepare('UPDATE buckets_recent SET seq = NULL, written = NULL WHERE seq IS NOT NULL AND start_s = ?').run(
      (T0 + 15 * MIN) / 1000,
    );
    expect(seqs.current()).toBe(first + 1);
    t.run(T0 + 45 * MIN);
    expect(closes.at(-1)!.seqs).toEqual([first + 2]);
  });

  it('acknowledged telemetry is saved at most hourly: a kill before that sends only the seqs above the durable position again', () => {
    const t = site();
    t.run(T0 + 60 * MIN);
    // a start now: its position was last saved now
    let { pending, db } = t.restart();
    const first = pending.read(0, 100);
    pending.ack(first.slice(0, 2));
    expect(pending.through).toBe(first[1]!.seq);
    // not yet durable: a kill (no stop) forgets it, and all four go again
    expect(sentSeq(db)).toBe(0);
    ({ pending, db } = t.restart());
    expect(pending.read(0, 100).map((r) => r.seq)).toEqual(first.map((r) => r.seq));
    // an hour on, an acknowledgement saves the position in a commit of its own
    t.setClock(t.clock.now() + SENT_SAVE_MS);
    pending.ack(first.slice(0, 3));
    expect(sentSeq(db)).toBe(first[2]!.seq);
    ({ pending } = t.restart());
    // nothing lost, nothing below the durable position again
    expect(pending.read(0, 100).map((r) => r.seq)).toEqual([first[3]!.seq]);
  });

  it('an acknowledgement out of order moves the position only once the ones below are in', () => {
    const t = site();
    t.run(T0 + 45 * MIN);
    const { pending } = t.get();
    const rows = pending.read(0, 100);
    pending.ack([rows[2]!]);
    expect(pending.through).toBe(0);
    pending.ack([rows[0]!]);
    expect(pending.through).toBe(rows[0]!.seq);
    pending.ack([rows[1]!]);
    expect(pending.through).toBe(rows[2]!.seq);
    pending.restart();
    expect(pending.read(0, 100)).toEqual([]);
  });

  it('the fold keeps buckets whose telemetry is not durably acknowledged, and folds them after the ack', () => {
    const t = site();
    t.run(T0 + DAY + 60 * MIN);
    const { db, pending } = t.get();
    // a day and more of closes, none acknowledged: nothing moved to the archive
    expect(count(db, 'SELECT COUNT(*) FROM buckets')).toBe(0);
    const rows = pending.read(0, 1000);
    expect(rows).toHaveLength(100);
    pending.ack(rows);
    // the next close's fold saves the position in its transaction and moves what was acknowledged
    t.run(T0 + DAY + 75 * MIN);
    expect(sentSeq(db)).toBe(rows.at(-1)!.seq);
    expect(count(db, 'SELECT COUNT(*) FROM buckets')).toBeGreaterThan(0);
    // only the last close's rows (not yet sent) stay
    expect(count(db, 'SELECT COUNT(DISTINCT start_s) FROM buckets_recent')).toBe(1);
    expect(
      count(db, `SELECT COUNT(*) FROM buckets_recent WHERE seq IS NULL OR (seq > 1 AND seq <= ${rows.at(-1)!.seq})`),
    ).toBe(0);
    expect(pending.read(rows.at(-1)!.seq, 10).map((r) => r.seq)).toEqual([rows.at(-1)!.seq + 1]);
    // every bucket is still read once, from either table
    expect(count(db, 'SELECT COUNT(DISTINCT start_s) FROM buckets_all')).toBe(101);
  });

  it('a site whose uplink was removed folds again, and the counter stays above the seqs it moved', () => {
    const t = site({ hold: false });
    t.run(T0 + DAY + 30 * MIN);
    const { db, seqs } = t.get();
    const top = seqs.current();
    expect(count(db, 'SELECT COUNT(*) FROM buckets')).toBeGreaterThan(0);
    expect(count(db, 'SELECT COUNT(*) FROM buckets_recent')).toBeLessThan(count(db, 'SELECT COUNT(*) FROM buckets'));
    // the fold raised the outbox's counter to the highest seq it moved: a new counter starts above it
    expect(outboxSeq(db)).toBeGreaterThan(0);
    const again = t.restart();
    expect(again.seqs.current()).toBe(top);
  });

  it('pending telemetry older than outbox.maxAgeDays is dropped and counted by age', () => {
    const t = site({ maxAgeDays: 1 });
    t.run(T0 + 60 * MIN);
    const { db, pending } = t.get();
    const now = T0 + DAY + 40 * MIN;
    // the first two messages were written more than a day before `now`
    const r = trim(db, now - DAY, 1e9, now, pending.through);
    expect(r.byAge).toBe(2);
    expect(r.telemetry).toHaveLength(2);
    pending.dropped(r.telemetry);
    expect(outboxDrops(db)).toEqual({ byAge: 2, bySize: 0, lastAt: now });
    expect(pending.read(0, 100)).toHaveLength(2);
    expect(pending.stats().depth).toBe(2);
  });

  it('a backlog drained a few at a time while closes go on and one message is written again: each once, in seq order, as closed', () => {
    const t = site();
    // an outage's backlog: twelve hours of closes
    t.run(T0 + 12 * 60 * MIN);
    const { db, closes, pending } = t.get();
    const made = () =>
      new Map(closes.flatMap((c) => c.seqs.map((q, i) => [q, telemetryBodies(t.ctx, c.closed)[i]!.body])));
    expect(pending.stats().depth).toBe(48);
    const got: number[] = [];
    let cursor = 0;
    let vanished: number | undefined;
    for (let turn = 0; turn < 40; turn++) {
      const rows = pending.read(cursor, 5);
      if (rows.length === 0) break;
      for (const r of rows) {
        expect(r.body).toBe(made().get(r.seq));
        got.push(r.seq);
      }
      cursor = rows.at(-1)!.seq;
      pending.ack(rows);
      if (turn === 2) {
        // closes during the catch-up: seqs above every one read so far
        t.run(T0 + 13 * 60 * MIN);
        expect(pending.stats().depth).toBe(48 + 4 - got.length);
      }
      if (turn === 3) {
        // a message not yet sent loses its rows' stamps (written again): the drain goes past it
        vanished = cursor + 3;
        db.prepare('UPDATE buckets_recent SET seq = NULL, written = NULL WHERE seq = ?').run(vanished);
        db.prepare(`UPDATE buckets_recent SET seq = NULL WHERE seq = 1 AND start_s = ?`).run(
          closes.find((c) => c.seqs.includes(vanished!))!.closed[0]!.start / 1000,
        );
      }
    }
    const all = closes.flatMap((c) => c.seqs);
    expect(got).toEqual(all.filter((q) => q !== vanished));
    expect(pending.through).toBe(all.at(-1));
    expect(pending.stats().depth).toBe(0);
  });

  it('a read rebuilds at most ROWS_PER_READ bucket rows, whatever it is asked for: the rest follow in the next reads', () => {
    const t = site();
    // eight days unacknowledged: the fold keeps them, 768 messages of a row per stream each
    t.run(T0 + 8 * DAY);
    const { closes, pending } = t.get();
    const all = closes.flatMap((c) => c.seqs);
    const streams = closes[0]!.closed.length;
    expect(all.length * streams).toBeGreaterThan(4096);
    const got: number[] = [];
    let cursor = 0;
    for (;;) {
      const rows = pending.read(cursor, 1000);
      if (rows.length === 0) break;
      expect(rows.length * streams).toBeLessThanOrEqual(4096);
      got.push(...rows.map((r) => r.seq));
      cursor = rows.at(-1)!.seq;
      pending.ack(rows);
    }
    expect(got).toEqual(all);
    expect(pending.through).toBe(all.at(-1));
  });

  it('retention keeps the buckets of telemetry still pending', () => {
    const t = site();
    t.run(T0 + 45 * MIN);
    const { db, pending } = t.get();
    expect(oldestPendingUplink(db, 'telemetry')).toBe(T0);
    const rows = pending.read(0, 100);
    t.setClock(t.clock.now() + SENT_SAVE_MS);
    pending.ack(rows.slice(0, 1));
    expect(oldestPendingUplink(db, 'telemetry')).toBe(T0 + 15 * MIN);
    pending.ack(rows);
    pending.save();
    expect(oldestPendingUplink(db, 'telemetry')).toBeNull();
  });

  it('migration 19 on a database with telemetry pending in its outbox: those rows still go, then the new ones above them', () => {
    const t = site();
    const { close } = t.get();
    // the file as schema 18 left it, with a close's telemetry in the outbox
    close();
    const old = new (sqliteDriver())(t.file);
    old.exec(
      'ALTER TABLE buckets_recent DROP COLUMN seq; ALTER TABLE buckets_recent DROP COLUMN written; DROP TABLE uplink_sent',
    );
    old.pragma('user_version = 18');
    const [legacy] = enqueue(
      old,
      [{ topic: 'telemetry', body: '{"v":2,"time":"2026-11-22T23:45:00Z"}', retain: false }],
      T0,
    );
    old.close();
    const again = t.restart();
    expect(readAfter(again.db, 0, 10).map((r) => r.seq)).toEqual([legacy]);
    t.run(T0 + 15 * MIN);
    const rows = again.pending.read(0, 100);
    expect(rows.map((r) => [r.seq, r.telemetry])).toEqual([
      [legacy, false],
      [legacy! + 1, true],
    ]);
    again.pending.ack(rows);
    expect(readAfter(again.db, 0, 10)).toEqual([]);
  });
});
