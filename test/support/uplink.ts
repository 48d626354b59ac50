import { Writable } from 'node:stream';
import type { Database } from 'better-sqlite3';
import { type Logger, pino } from 'pino';
import { expect } from 'vitest';
import type { UplinkConfig } from '../../src/config/types.js';
import { bodyText } from '../../src/store/outbox.js';
import { sentSeq, telemetryAfter } from '../../src/store/uplink-telemetry.js';
import type { Collector, TestBroker } from './mqtt-brokers.js';

const Q = 15 * 60_000;

/** Demo options that uplink the demo's gateway to `broker`, with quick reconnects for tests. */
export function uplinkTo(broker: TestBroker, more: Partial<UplinkConfig> = {}) {
  return {
    mqtt: broker.url,
    configure: (c: { uplink?: UplinkConfig }) => {
      Object.assign(c.uplink!, { protocolVersion: broker.protocolVersion, reconnectMaxSeconds: 1, ...more });
    },
  };
}

/** A logger whose JSON lines a test can read. */
export function capturingLogger(): { log: Logger; lines: () => Record<string, unknown>[] } {
  const out: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      out.push(String(chunk));
      cb();
    },
  });
  return {
    log: pino({ level: 'info' }, stream),
    lines: () => out.flatMap((l) => l.split('\n').filter(Boolean)).map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/** Every stored bucket as `streamId|start ISO`. */
export function storedBuckets(db: Database): Set<string> {
  const rows = db
    .prepare('SELECT s.key, b.start_s FROM buckets_all b JOIN streams s ON s.id = b.stream')
    .raw()
    .all() as [string, number][];
  return new Set(rows.map(([k, s]) => `${k}|${new Date(s * 1000).toISOString().replace('.000Z', 'Z')}`));
}

const isoOf = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');

/**
 * What waits to be sent, from a database file: the outbox's rows and the telemetry stamped on
 * buckets above the durable ack position (store/uplink-telemetry.ts; after a clean stop, the
 * position the stop saved). `buckets`: the buckets the waiting telemetry carries, `streamId|start`.
 */
export function waitingOf(db: Database): { seqs: Set<number>; buckets: Set<string> } {
  const seqs = new Set<number>();
  const buckets = new Set<string>();
  for (const [seq, body] of db.prepare('SELECT seq, body FROM uplink_outbox').raw().all() as [
    number,
    string | Buffer,
  ][]) {
    seqs.add(seq);
    for (const e of JSON.parse(bodyText(body)).entries ?? []) buckets.add(`${e.deviceId}|${e.interval.split('/')[0]}`);
  }
  for (const p of telemetryAfter(db, sentSeq(db), 1e9)) {
    seqs.add(p.seq);
    for (const [key, startS] of p.rows) buckets.add(`${key}|${isoOf(startS)}`);
  }
  return { seqs, buckets };
}

/**
 * Messages not yet at the consumer: the outbox's rows (deleted after the broker's PUBACK), and
 * the telemetry above the durable ack position that `c` has not received (that position is saved
 * hourly, so a running gateway's is behind what the broker acknowledged).
 */
export function undelivered(db: Database, c: Collector): number {
  const got = new Set(dedupe(c).map((m) => m.seq));
  const outbox = db.prepare('SELECT COUNT(*) FROM uplink_outbox').pluck().get() as number;
  return outbox + telemetryAfter(db, sentSeq(db), 1e9).filter((p) => !got.has(p.seq)).length;
}

export interface Delivered {
  seq: number;
  topic: string;
  body: any;
}

/** What a consumer keeps: one message per seq (QoS 1 may deliver one twice), ordered by seq. */
export function dedupe(c: Collector): Delivered[] {
  const bySeq = new Map<number, Delivered>();
  for (const m of c.messages) {
    const body = JSON.parse(m.payload);
    if (typeof body.seq !== 'number') continue;
    const had = bySeq.get(body.seq);
    // a redelivery carries the same message
    if (had) expect(had.body, `seq ${body.seq} delivered twice with different content`).toEqual(body);
    bySeq.set(body.seq, { seq: body.seq, topic: m.topic, body });
  }
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

/** Telemetry entries (live, not resync) as `streamId|start`, in seq order. */
export function telemetryKeys(d: Delivered[]): string[] {
  return d
    .filter((m) => m.topic.endsWith('/telemetry') && m.body.resync === undefined)
    .flatMap((m) =>
      (m.body.entries as { deviceId: string; interval: string }[]).map(
        (e) => `${e.deviceId}|${e.interval.split('/')[0]}`,
      ),
    );
}

/**
 * The delivery guarantees as a consumer checks them: no seq missing between the first and the
 * last, every stored bucket delivered once, and per stream in time order.
 */
export function expectComplete(d: Delivered[], stored: Set<string>): void {
  expect(d.length).toBeGreaterThan(0);
  const missingSeqs: number[] = [];
  for (let i = 1; i < d.length; i++) for (let s = d[i - 1]!.seq + 1; s < d[i]!.seq; s++) missingSeqs.push(s);
  expect(missingSeqs, 'seq gaps').toEqual([]);
  const keys = telemetryKeys(d);
  expect(new Set(keys).size, 'a bucket delivered under two seqs').toBe(keys.length);
  const got = new Set(keys);
  const missing = [...stored].filter((k) => !got.has(k));
  expect(missing, 'stored buckets never delivered').toEqual([]);
  const last = new Map<string, string>();
  for (const k of keys) {
    const [stream, start] = k.split('|') as [string, string];
    const prev = last.get(stream);
    if (prev !== undefined) expect(start > prev, `${stream}: ${start} after ${prev}`).toBe(true);
    last.set(stream, start);
  }
}

/**
 * Resolves once the consumer has every bucket of `stored`, or after `timeoutMs` (the check that
 * follows then names what is missing): a PUBACK to the gateway, or its clean exit, does not mean
 * the subscriber has the message yet.
 */
export async function deliveredOf(c: Collector, stored: Set<string>, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let missing = [...stored];
  while (missing.length > 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 25));
    const got = new Set(telemetryKeys(dedupe(c)));
    missing = missing.filter((k) => !got.has(k));
  }
}

/**
 * Waits until the consumer has every bucket of `stored` (deliveredOf), then checks the whole
 * delivery with expectComplete. Take `stored` once, before waiting: a bucket that closes later
 * may still be on its way when the check runs.
 */
export async function expectDelivered(c: Collector, stored: Set<string>, timeoutMs = 20_000): Promise<Delivered[]> {
  await deliveredOf(c, stored, timeoutMs);
  const d = dedupe(c);
  expectComplete(d, stored);
  return d;
}

export const BUCKET_MS = Q;
