/**
 * The consumer's per-site seq ledger and hole handling, with two stores sharing one database:
 * a real SQLite file, and a real PostgreSQL server (test/support/postgres.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { holeInterval, scanGaps } from '../../src/consumer/gaps.js';
import { ConsumerStore, type Incoming } from '../../src/consumer/store.js';
import { notePostgresSkipped, SKIP_POSTGRES, startPostgres, type TestPostgres } from '../support/postgres.js';

notePostgresSkipped('test/consumer/ledger.test.ts');

const T = Date.parse('2026-11-01T10:00:00Z');
const state = (n: number): Incoming => ({ kind: 'state', key: 'topology', body: `{"n":${n}}` });
const tele = (start: number, w: number): Incoming => ({
  kind: 'telemetry',
  resync: null,
  entries: [{ deviceId: 'inv', start, interval: 'x/y', deviceKind: 'inverter', entry: JSON.stringify({ power_W: w }) }],
});
const grid = (timestamp: string, st = 'not_present'): Incoming => ({
  kind: 'grid-event',
  deviceId: 'gm__GRID_METER_DERIVED',
  timestamp,
  state: st,
});
let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});
let server: TestPostgres | undefined;
afterAll(async () => server?.close());

const databases = [
  {
    name: 'SQLite',
    skip: false,
    target: async () => {
      dir = mkdtempSync(join(tmpdir(), 'sitegw-ledger-'));
      return join(dir, 'c.db');
    },
  },
  {
    name: 'PostgreSQL',
    skip: SKIP_POSTGRES,
    target: async () => {
      server ??= await startPostgres();
      return server.newDatabase();
    },
  },
];

for (const { name, skip, target } of databases)
  describe.skipIf(skip)(`consumer ledger in ${name}`, () => {
    const stores2 = async (t: string) => [await ConsumerStore.open(t), await ConsumerStore.open(t)] as const;
    const stores = async () => stores2(await target());

    it('drops a seq seen before, whichever instance saw it, and takes seqs in any order', async () => {
      const [a, b] = await stores();
      expect(await a.accept('s', 'p/s', 5, T, state(5), 0)).toBe(true);
      expect(await b.accept('s', 'p/s', 5, T, state(5), 0)).toBe(false);
      expect(await b.accept('s', 'p/s', 3, T, state(3), 0)).toBe(true);
      expect(await a.accept('s', 'p/s', 4, T, state(4), 0)).toBe(true);
      expect(await a.accept('s', 'p/s', 3, T, state(3), 0)).toBe(false);
      expect(await a.gaps()).toEqual([]);
      expect(await a.siteCounts()).toEqual([{ siteId: 's', messages: 3, duplicates: 2 }]);
      await a.close();
      await b.close();
    });

    it('keeps the ledger exact when both instances take the same seqs at the same time', async () => {
      const [a, b] = await stores();
      const seqs = Array.from({ length: 40 }, (_, i) => i + 1);
      const results = await Promise.all([
        ...seqs.map((n) => a.accept('s', 'p/s', n, T, state(n), 0)),
        ...seqs.reverse().map((n) => b.accept('s', 'p/s', n, T, state(n), 0)),
      ]);
      expect(results.filter(Boolean)).toHaveLength(40);
      expect(await a.gaps()).toEqual([]);
      expect(await b.siteCounts()).toEqual([{ siteId: 's', messages: 40, duplicates: 40 }]);
      await a.close();
      await b.close();
    });

    it('keeps the telemetry entry of the highest seq, whatever order they come in', async () => {
      const [a, b] = await stores();
      await a.accept('s', 'p/s', 10, T, tele(T, 2), 0);
      await a.accept('s', 'p/s', 9, T, tele(T, 1), 0);
      expect(JSON.parse((await a.telemetryEntry('s', 'inv', T))!.entry)).toEqual({ power_W: 2 });
      expect((await a.telemetryKeys()).size).toBe(1);
      await a.close();
      await b.close();
    });

    it('stores a grid event once, whichever message brought it (live, a resync copy, in either order)', async () => {
      const [a, b] = await stores();
      const rows = () =>
        a.db.all<{ seq: number; timestamp: string }>('SELECT seq, timestamp FROM grid_events ORDER BY seq');
      expect(await a.accept('s', 'p/s', 7, T, grid('2026-11-01T10:00:00.000Z'), 0)).toBe(true);
      // the resync's copy: a new seq, processed, nothing stored twice
      expect(await b.accept('s', 'p/s', 12, T, grid('2026-11-01T10:00:00.000Z'), 0)).toBe(true);
      // a copy that comes first (the live message late): the one row stays
      expect(await b.accept('s', 'p/s', 13, T, grid('2026-11-01T10:05:00.000Z', 'ok'), 0)).toBe(true);
      expect(await a.accept('s', 'p/s', 8, T, grid('2026-11-01T10:05:00.000Z', 'ok'), 0)).toBe(true);
      expect(await rows()).toEqual([
        { seq: 7, timestamp: '2026-11-01T10:00:00.000Z' },
        { seq: 13, timestamp: '2026-11-01T10:05:00.000Z' },
      ]);
      // the same instant at another site is another event
      expect(await a.accept('t', 'p/t', 7, T, grid('2026-11-01T10:00:00.000Z'), 0)).toBe(true);
      expect(await a.db.all('SELECT site_id FROM grid_events')).toHaveLength(3);
      await a.close();
      await b.close();
    });

    it('opens a database from before the unique key that holds an event twice: keeps the lowest seq', async () => {
      const t = await target();
      const old = await ConsumerStore.open(t);
      // the schema as it was: grid_events keyed by seq only
      await old.db.run('DROP INDEX grid_events_once');
      for (const [seq, ts] of [
        [9, '2026-11-01T10:00:00.000Z'],
        [4, '2026-11-01T10:00:00.000Z'],
        [6, '2026-11-01T10:00:00.000Z'],
        [5, '2026-11-01T11:00:00.000Z'],
      ] as const)
        await old.db.run('INSERT INTO grid_events (site_id, seq, device_id, timestamp, state) VALUES (?, ?, ?, ?, ?)', [
          's',
          seq,
          'gm__GRID_METER_DERIVED',
          ts,
          'ok',
        ]);
      await old.close();
      const [a, b] = [await ConsumerStore.open(t), await ConsumerStore.open(t)];
      const rows = () => a.db.all<{ seq: number }>('SELECT seq FROM grid_events ORDER BY seq');
      expect(await rows()).toEqual([{ seq: 4 }, { seq: 5 }]);
      // and the key holds from now on
      await b.accept('s', 'p/s', 20, T, grid('2026-11-01T11:00:00.000Z'), 0);
      expect(await rows()).toEqual([{ seq: 4 }, { seq: 5 }]);
      await a.close();
      await b.close();
    });

    it('finds a hole, asks once though two instances scan, and records it filled when the resync is all there', async () => {
      const [a, b] = await stores();
      await a.accept('s', 'p/s', 1, T, state(1), 0);
      await a.accept('s', 'p/s', 4, T + 3_600_000, state(4), 0);
      expect(await a.gaps()).toEqual([{ siteId: 's', fromSeq: 2, toSeq: 3, beforeTime: T, afterTime: T + 3_600_000 }]);
      const sent: string[] = [];
      const send = (p: string, id: string, interval: string) => sent.push(`${p} ${id} ${interval}`);
      const policy = { waitMs: 1000, retryMs: 60_000 };
      expect(await scanGaps(a, policy, send, 0)).toEqual({ found: 1, requested: 0, closed: 0 });
      const [fromB, fromA] = await Promise.all([scanGaps(b, policy, send, 1000), scanGaps(a, policy, send, 1000)]);
      expect(fromB.requested + fromA.requested).toBe(1);
      expect(sent).toEqual(['p/s gap-1-1 2026-11-01T09:30:00Z/2026-11-01T11:30:00Z']);
      await b.accepted('gap-1-1', 5, 6);
      await b.accept('s', 'p/s', 5, T, tele(T, 1), 0);
      expect((await scanGaps(a, policy, send, 2000)).closed).toBe(0);
      await a.accept('s', 'p/s', 6, T, tele(T + 900_000, 1), 0);
      expect((await scanGaps(a, policy, send, 3000)).closed).toBe(1);
      expect((await a.holes())[0]).toMatchObject({
        status: 'filled',
        closedAt: 3000,
        requestedAt: 1000,
        firstSeq: 5,
        lastSeq: 6,
      });
      expect(await a.gaps()).toEqual([]);
      await a.close();
      await b.close();
    });

    it('counts only the seqs a fill entered when some of the hole came late: messages + filled = the run', async () => {
      // bench/fleet.ts once ended 7776 + 408 = 8176: seqs of a hole processed late were counted again as filled
      const [a, b] = await stores();
      await a.accept('s', 'p/s', 1, T, state(1), 0);
      await a.accept('s', 'p/s', 5, T, state(5), 0);
      const policy = { waitMs: 0, retryMs: 60_000 };
      const sent: string[] = [];
      await scanGaps(a, policy, (_p, id) => sent.push(id), 0);
      await b.accepted(sent[0]!, 6, 7);
      // seq 3 of the hole 2..4 arrives late, then the resync's 6 and 7
      expect(await b.accept('s', 'p/s', 3, T, state(3), 0)).toBe(true);
      await a.accept('s', 'p/s', 6, T, tele(T, 1), 0);
      await b.accept('s', 'p/s', 7, T, tele(T + 900_000, 1), 0);
      expect((await scanGaps(a, policy, () => undefined, 10)).closed).toBe(1);
      const holes = await a.holes();
      // 2..2 and 4..4 are what the fill entered; 3 was a message
      expect(holes.map((h) => [h.fromSeq, h.toSeq, h.status, h.filledSeqs])).toEqual([[2, 4, 'filled', 2]]);
      const [counts] = await a.siteCounts();
      const [run] = await a.db.all<{ lo: number; hi: number }>('SELECT lo, hi FROM seq_ranges');
      expect(run).toEqual({ lo: 1, hi: 7 });
      expect(counts!.messages + holes[0]!.filledSeqs!).toBe(run!.hi - run!.lo + 1);
      await a.close();
      await b.close();
    });

    it('adds filled_seqs to a holes table made before it, and opens it again without change', async () => {
      const t = await target();
      const old = await ConsumerStore.open(t);
      await old.db.run('ALTER TABLE holes DROP COLUMN filled_seqs');
      await old.accept('s', 'p/s', 1, T, state(1), 0);
      await old.accept('s', 'p/s', 3, T, state(3), 0);
      await scanGaps(old, { waitMs: 0, retryMs: 1 }, () => undefined, 0);
      await old.close();
      const [a, b] = await stores2(t);
      expect((await a.holes()).map((h) => [h.fromSeq, h.filledSeqs])).toEqual([[2, null]]);
      await a.close();
      await b.close();
    });

    it('finds the seqs a status says were written above the highest held, and asks only while the site is online', async () => {
      const [a, b] = await stores();
      await a.accept('s', 'p/s', 1, T, state(1), 0);
      // the gateway wrote 2 and 3 (lost) and stopped cleanly: its offline status says so
      await b.noteStatus('s', 'p/s', false, 3, T + 60_000, 0);
      expect(await a.gaps()).toEqual([{ siteId: 's', fromSeq: 2, toSeq: 3, beforeTime: T, afterTime: T + 60_000 }]);
      // an older status (or the last will, without lastSeq) does not shrink it
      await b.noteStatus('s', 'p/s', false, 2, T, 0);
      await b.noteStatus('s', 'p/s', false, null, T, 0);
      const sent: string[] = [];
      const policy = { waitMs: 0, retryMs: 100 };
      await scanGaps(a, policy, (_p, id) => sent.push(id), 0);
      expect(sent).toEqual([]);
      await b.noteStatus('s', 'p/s', true, 3, T + 120_000, 0);
      await scanGaps(a, policy, (_p, id) => sent.push(id), 10);
      expect(sent).toEqual(['gap-1-1']);
      expect((await a.holes()).map((h) => [h.fromSeq, h.toSeq, h.status])).toEqual([[2, 3, 'requested']]);
      await a.close();
      await b.close();
    });

    it('closes a hole whose own seqs came late as arrived, and asks again for one left unanswered', async () => {
      const [a, b] = await stores();
      await a.accept('s', 'p/s', 1, T, state(1), 0);
      await a.accept('s', 'p/s', 3, T, state(3), 0);
      await a.accept('s', 'p/s', 5, T, state(5), 0);
      const sent: string[] = [];
      const policy = { waitMs: 0, retryMs: 100 };
      await scanGaps(a, policy, (_p, id) => sent.push(id), 0);
      await a.accept('s', 'p/s', 2, T, state(2), 0);
      await scanGaps(a, policy, (_p, id) => sent.push(id), 50);
      await scanGaps(a, policy, (_p, id) => sent.push(id), 200);
      expect(sent).toEqual(['gap-1-1', 'gap-2-1', 'gap-2-2']);
      expect((await a.holes()).map((h) => [h.fromSeq, h.status])).toEqual([
        [2, 'arrived'],
        [4, 'requested'],
      ]);
      await a.close();
      await b.close();
    });

    it('asks for a grid event written just before the later neighbour: the bucket close after its boundary', () => {
      // the later neighbour is the telemetry of 10:00, written at 10:15:15 when the bucket closed;
      // an event stamped 10:15:00 and confirmed at 10:15:10 went out before it, into the hole
      const [from, to] = holeInterval({ beforeTime: T - 3_600_000, afterTime: T })
        .split('/')
        .map(Date.parse) as [number, number];
      const event = Date.parse('2026-11-01T10:15:00Z');
      expect(event >= from && event < to, `${new Date(from).toISOString()}/${new Date(to).toISOString()}`).toBe(true);
    });

    it('asks for at most 31 days, ending at the later side', () => {
      expect(holeInterval({ beforeTime: T - 90 * 86_400_000, afterTime: T })).toBe(
        '2026-10-01T10:30:00Z/2026-11-01T10:30:00Z',
      );
    });
  });
