/**
 * Faults inside the uplink's socket-facing callbacks stay there (issue 14: no unhandled fault ends
 * the process): a store fault while a PUBACK is handled, and a handler that throws on an incoming
 * message, are reported to the feature (which logs them) and the connection goes on. Real broker
 * (aedes in process), real mqtt.js client, real SQLite.
 */
import mqtt from 'mqtt';
import { afterEach, expect, it } from 'vitest';
import { parseConfig } from '../../src/profiles/site-config.js';
import { openDatabase } from '../../src/store/db.js';
import { enqueue } from '../../src/store/outbox.js';
import { Drainer } from '../../src/uplink/drain.js';
import { MqttLink } from '../../src/uplink/link.js';
import { Pending } from '../../src/uplink/pending.js';
import { text, withAppended } from '../config/fixtures.js';
import { aedesBroker, type TestBroker } from '../support/mqtt-brokers.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function broker(): Promise<TestBroker> {
  const b = await aedesBroker();
  cleanups.push(() => b.close());
  return b;
}

it('a store fault while a PUBACK is handled is reported through onFault, not thrown into mqtt.js', async () => {
  const b = await broker();
  const db = openDatabase(':memory:');
  cleanups.push(() => db.close());
  enqueue(
    db,
    [1, 2].map((n) => ({ topic: 'telemetry', body: `{"v":1,"n":${n}}`, retain: false })),
    0,
  );
  const client = await mqtt.connectAsync(b.url, { protocolVersion: 4, reconnectPeriod: 0 });
  cleanups.push(() => client.endAsync(true));
  let fault!: (err: unknown) => void;
  const faulted = new Promise<unknown>((r) => (fault = r));
  const drainer = new Drainer(new Pending(db, { siteId: 'x', stream: () => undefined, socScale: 'percent' }, () => 0), {
    prefix: 'sitegw/test',
    maxInflight: 1,
    ratePerSecond: 1000,
    onRefused: () => undefined,
    onFault: (err) => fault(err),
  });
  // both rows are read ahead and the first is in flight; then the store breaks under it: the
  // PUBACK's pump and flush meet a missing table
  drainer.attach(client, undefined);
  db.exec('DROP TABLE uplink_outbox');
  expect(String(await faulted)).toMatch(/no such table/);
  expect(client.connected).toBe(true);
  drainer.detach();
});

it('a message handler that throws is reported through faulted; the connection takes the next message', async () => {
  const b = await broker();
  const r = parseConfig(
    text(withAppended(['uplink:', `  url: ${b.url}`, '  protocolVersion: 4'])),
    'site.yaml',
    '/etc/sitegw',
  );
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  const received: string[] = [];
  const faults: unknown[] = [];
  let subscribed!: () => void;
  const ready = new Promise<void>((res) => (subscribed = res));
  let second!: () => void;
  const gotSecond = new Promise<void>((res) => (second = res));
  const link = new MqttLink(
    r.config.uplink!,
    { topic: 'sitegw/test/status', payload: 'offline' },
    {
      connected: (client) => void client.subscribe('sitegw/test/cmd/#', { qos: 1 }, () => subscribed()),
      disconnected: () => undefined,
      message: (_topic, payload) => {
        received.push(payload.toString());
        if (received.length === 1) throw new Error('injected handler fault');
        second();
      },
      failed: () => undefined,
      faulted: (handler, err) => faults.push([handler, (err as Error).message]),
    },
  );
  link.start();
  cleanups.push(() => link.stop());
  await ready;
  const sender = await mqtt.connectAsync(b.url, { protocolVersion: 4, reconnectPeriod: 0 });
  cleanups.push(() => sender.endAsync(true));
  await sender.publishAsync('sitegw/test/cmd/resync', 'first', { qos: 1 });
  await sender.publishAsync('sitegw/test/cmd/resync', 'second', { qos: 1 });
  await gotSecond;
  expect(received).toEqual(['first', 'second']);
  expect(faults).toEqual([['message', 'injected handler fault']]);
  expect(link.connected).toBe(true);
});
