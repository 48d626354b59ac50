/**
 * The reference consumer end to end against real mosquitto (MQTT 5 shared subscriptions): the
 * demo site's gateway uplinks to it, two consumer instances share one group and one database,
 * both are stopped while the gateway goes on publishing (the broker drops what no one takes), and
 * once back they find the hole in the site's seqs, ask for it with cmd/resync, and record it
 * filled. At the end the consumer's database holds every bucket the gateway stored, once, and
 * every grid event: the one lost in the hole came back with the resync, the one the consumers
 * had before came again with it and is stored once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Consumer } from '../../src/consumer/consumer.js';
import { ConsumerStore } from '../../src/consumer/store.js';
import type { GridState } from '../../src/core/channels.js';
import { recentGridEvents } from '../../src/store/grid-events.js';
import { demoSite, waitFor } from '../support/demo.js';
import {
  type Collector,
  collect,
  MOSQUITTO,
  mosquittoBroker,
  noteMosquittoSkipped,
  type TestBroker,
} from '../support/mqtt-brokers.js';
import { notePostgresSkipped, SKIP_POSTGRES, startPostgres, type TestPostgres } from '../support/postgres.js';
import { storedBuckets, uplinkTo } from '../support/uplink.js';

noteMosquittoSkipped('test/consumer/consumer-e2e.test.ts');
notePostgresSkipped('test/consumer/consumer-e2e.test.ts');

type Demo = Awaited<ReturnType<typeof demoSite>>;
const SITE = 'demo-site';

const databases = [
  { name: 'a SQLite file', skip: false },
  { name: 'PostgreSQL', skip: SKIP_POSTGRES },
];

for (const { name, skip } of databases)
  describe.skipIf(!MOSQUITTO || skip)(
    `sitegw consumer into ${name} against mosquitto: shared subscription, dedup, resync of a hole`,
    () => {
      let broker: TestBroker;
      let demo: Demo;
      let dir: string;
      let db: string;
      let pg: TestPostgres | undefined;
      let consumers: Consumer[] = [];
      /** every grid-events message on the wire, as a plain subscriber sees them */
      let wire: Collector | undefined;
      const logs: string[] = [];

      const startConsumers = async () => {
        consumers = ['a', 'b'].map(
          (n) =>
            new Consumer({
              broker: broker.url,
              group: 'cloud',
              filter: 'sitegw/+',
              db,
              clientId: `consumer-${n}`,
              gaps: { waitMs: 300, retryMs: 10_000 },
              scanMs: 100,
              log: (l) => logs.push(`${n}: ${l}`),
            }),
        );
        for (const c of consumers) await c.start();
      };
      /** what the consumer has of the gateway's stored buckets, as `streamId|start` */
      const have = async () => {
        const s = await ConsumerStore.open(db);
        try {
          return new Set([...(await s.telemetryKeys()).keys()].map((k) => k.slice(SITE.length + 1)));
        } finally {
          await s.close();
        }
      };
      /** the consumer db's grid events as `timestamp state seq` */
      const gridRows = async () => {
        const s = await ConsumerStore.open(db);
        try {
          const sql = 'SELECT timestamp, state, seq FROM grid_events WHERE site_id = ? ORDER BY timestamp, seq';
          const rows = await s.db.all<{ timestamp: string; state: string; seq: number }>(sql, [SITE]);
          return rows.map((r) => `${r.timestamp} ${r.state} ${r.seq}`);
        } finally {
          await s.close();
        }
      };
      /** flips the simulated grid relay and waits for the gateway to store the change as an event */
      const relay = async (outage: boolean, state: GridState) => {
        const had = recentGridEvents(demo.daemon.ctx.db, 100).length;
        const res = await fetch(`${demo.simControl.url}/grid-outage`, {
          method: 'POST',
          body: JSON.stringify({ on: outage }),
        });
        expect(res.status).toBe(200);
        const e = await waitFor(`a stored ${state} grid event`, () => {
          const events = recentGridEvents(demo.daemon.ctx.db, 100);
          return (events.length > had && events[0]?.state === state && events[0]) || undefined;
        });
        return new Date(e.timestamp).toISOString();
      };
      const missing = async () => {
        const got = await have();
        return [...storedBuckets(demo.daemon.ctx.db)].filter((k) => !got.has(k));
      };

      beforeAll(async () => {
        dir = mkdtempSync(join(tmpdir(), 'sitegw-consumer-'));
        if (name === 'PostgreSQL') {
          pg = await startPostgres();
          db = await pg.newDatabase();
        } else db = join(dir, 'cloud.db');
        broker = await mosquittoBroker();
        await startConsumers();
        demo = await demoSite({ speed: 600, history: 'PT2H', ...uplinkTo(broker) });
      });
      afterAll(async () => {
        for (const c of consumers) await c.stop().catch(() => undefined);
        await wire?.close();
        await demo?.cleanup();
        await broker?.close();
        await pg?.close();
        rmSync(dir, { recursive: true, force: true });
      });

      it('splits the site between two instances and stores every bucket once', async () => {
        await waitFor(
          'every stored bucket in the consumer db',
          async () => (demo.daemon.uplink!.health().outbox.depth === 0 && (await missing()).length === 0) || undefined,
          30_000,
        );
        expect(
          consumers.every((c) => c.stats.processed > 0),
          JSON.stringify(consumers.map((c) => c.stats)),
        ).toBe(true);
      });

      it('finds the hole left while both instances were down, asks for it with cmd/resync and records it filled', async () => {
        wire = await collect(broker.url, `sitegw/${SITE}/grid-events`);
        // a grid event the consumers store live, just before they go
        const before = await relay(true, 'not_present');
        await waitFor('the live grid event in the consumer db', async () =>
          (await gridRows()).some((r) => r.startsWith(`${before} `)),
        );
        for (const c of consumers) await c.stop();
        // and one while nobody takes the site's messages: lost for the consumer
        const during = await relay(false, 'ok');
        const up = demo.daemon.uplink!;
        const deliveredBefore = up.health().delivered;
        const storedBefore = storedBuckets(demo.daemon.ctx.db);
        // three bucket closes go to the broker with nobody subscribed: lost for the consumer
        await waitFor(
          'three buckets closed and acknowledged by the broker',
          () => {
            const lost = [...storedBuckets(demo.daemon.ctx.db)].filter((k) => !storedBefore.has(k));
            return (
              (lost.length >= 3 * 4 &&
                up.health().delivered > deliveredBefore + 3 &&
                up.health().outbox.depth === 0 &&
                lost) ||
              undefined
            );
          },
          30_000,
        );
        const lost = [...storedBuckets(demo.daemon.ctx.db)].filter((k) => !storedBefore.has(k));
        expect(await missing()).toEqual(expect.arrayContaining(lost));
        expect((await gridRows()).filter((r) => r.startsWith(`${during} `))).toEqual([]);

        await startConsumers();
        // and no hole open: a status's lastSeq can name seqs still on their way to the other
        // instance, a hole that closes as `arrived` when they land (docs/mqtt-contract.md)
        await waitFor(
          'the hole filled, every stored bucket in the consumer db, no hole open',
          async () => {
            const s = await ConsumerStore.open(db);
            try {
              return (
                ((await s.holes()).some((h) => h.status === 'filled') &&
                  (await missing()).length === 0 &&
                  (await s.openHoles()).length === 0) ||
                undefined
              );
            } finally {
              await s.close();
            }
          },
          30_000,
        );

        const s = await ConsumerStore.open(db);
        try {
          const filled = (await s.holes()).filter((h) => h.status === 'filled');
          expect(filled.length).toBeGreaterThanOrEqual(1);
          const h = filled[0]!;
          expect(h).toMatchObject({
            siteId: SITE,
            prefix: `sitegw/${SITE}`,
            requestId: expect.stringMatching(/^gap-/),
          });
          expect(h.toSeq).toBeGreaterThanOrEqual(h.fromSeq);
          expect(h.firstSeq).not.toBeNull();
          expect(h.closedAt).toBeGreaterThanOrEqual(h.requestedAt!);
          // the lost buckets came back through the resync, marked with its request id
          for (const k of lost) {
            const [stream, start] = k.split('|') as [string, string];
            const row = await s.telemetryEntry(SITE, stream, Date.parse(start));
            expect(row?.resync, k).toMatch(/^gap-/);
          }
          // no hole left open, and the ledger is one run again: every seq processed once, or
          // entered by a filled hole; the retained copies mosquitto hands a new subscriber were
          // kept out of the ledger (docs/mqtt-contract.md "Retained messages")
          expect(await s.openHoles()).toEqual([]);
          const runs = await s.db.all<{ lo: number; hi: number }>('SELECT lo, hi FROM seq_ranges');
          expect(runs).toHaveLength(1);
          const [counts] = await s.siteCounts();
          const holeSeqs = filled.reduce((n, x) => n + (x.filledSeqs ?? 0), 0);
          expect(counts!.messages + holeSeqs).toBe(runs[0]!.hi - runs[0]!.lo + 1);
          expect(consumers.reduce((n, c) => n + c.stats.retained, 0)).toBeGreaterThan(0);

          // both grid events once: the lost one as a resync brought it, the earlier one as it came
          // live although the resync sent it again
          const sent = (ts: string, resync: boolean) =>
            (wire?.json() ?? [])
              .filter((m) => m.timestamp === ts && (typeof m.resync === 'string') === resync)
              .map((m) => `${m.timestamp} ${m.state} ${m.seq}`);
          expect(sent(during, true).length).toBeGreaterThan(0);
          expect(sent(before, true).length).toBeGreaterThan(0);
          const rows = await gridRows();
          expect(rows.filter((r) => r.startsWith(`${during} `))).toEqual([expect.toBeOneOf(sent(during, true))]);
          expect(rows.filter((r) => r.startsWith(`${before} `))).toEqual(sent(before, false));
        } finally {
          await s.close();
        }
        expect(logs.filter((l) => /failed/.test(l))).toEqual([]);
      });
    },
  );
