/**
 * The drain on a data disk that refuses the delete of acknowledged rows (docs/design.md "Field
 * faults: what the numbers survive"): publishing goes on to the end of the backlog, the fault is
 * reported once (not at every batch of PUBACKs), and the acknowledged rows are deleted by the
 * first flush once the disk takes writes, rather than sent all over again on the next connection.
 * Real broker (aedes in process), real mqtt.js client, real SQLite; `query_only` makes every write
 * fail with SQLITE_READONLY, a storage fault, as a full disk's SQLITE_FULL is.
 */
import mqtt from 'mqtt';
import { afterEach, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/store/db.js';
import { enqueue, outboxStats } from '../../src/store/outbox.js';
import { isStorageFault } from '../../src/store/storage-faults.js';
import { Drainer } from '../../src/uplink/drain.js';
import { Pending } from '../../src/uplink/pending.js';
import { aedesBroker } from '../support/mqtt-brokers.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

// more than one read-ahead (256): the count-triggered flush is among those the disk refuses
const ROWS = 600;

it('publishes the whole backlog, reports the refused delete once, and deletes the acknowledged rows once writes work', async () => {
  const b = await aedesBroker();
  cleanups.push(() => b.close());
  const db = openDatabase(':memory:');
  cleanups.push(() => db.close());
  enqueue(
    db,
    Array.from({ length: ROWS }, (_, n) => ({ topic: 'telemetry', body: `{"v":1,"n":${n}}`, retain: false })),
    0,
  );
  const client = await mqtt.connectAsync(b.url, { protocolVersion: 4, reconnectPeriod: 0 });
  cleanups.push(() => client.endAsync(true));
  const faults: unknown[] = [];
  const drainer = new Drainer(new Pending(db, { siteId: 'x', stream: () => undefined, socScale: 'percent' }, () => 0), {
    prefix: 'sitegw/test',
    maxInflight: 64,
    ratePerSecond: 100_000,
    onRefused: () => undefined,
    onFault: (err) => void faults.push(err),
  });
  cleanups.push(() => drainer.detach());
  db.pragma('query_only = ON');
  drainer.attach(client, undefined);
  await vi.waitFor(() => expect(drainer.delivered).toBe(ROWS), { timeout: 20_000, interval: 20 });
  await vi.waitFor(() => expect(faults.length).toBeGreaterThan(0), { timeout: 5_000, interval: 20 });
  expect(faults).toHaveLength(1);
  expect(isStorageFault(faults[0])).toBe(true);
  expect(outboxStats(db).depth).toBe(ROWS);

  db.pragma('query_only = OFF');
  drainer.flush();
  // before: each refused batch was forgotten, so its rows stayed to go again on the next connection
  expect(outboxStats(db).depth).toBe(0);
});
