/**
 * A consumer written from the published contract alone (docs/mqtt-contract.md and the schemas of
 * docs/asyncapi.yaml as published, open to new fields), not from src/consumer/: the rules it
 * follows are quoted where it follows them. Against the demo gateway on real mosquitto it shows
 * that retained deliveries never make holes, that a message lost just before the gateway stops
 * is found from the next status, that a message with a field from the future is valid, and that
 * every resync interval it computes is accepted, next to resync copies too.
 */
import mqtt, { type IPublishPacket, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadContract } from '../support/contract.js';
import { demoSite, waitFor } from '../support/demo.js';
import { MOSQUITTO, mosquittoBroker, noteMosquittoSkipped, type TestBroker } from '../support/mqtt-brokers.js';
import { storedBuckets, uplinkTo } from '../support/uplink.js';

noteMosquittoSkipped('test/consumer/doc-rules-e2e.test.ts');

const SITE = 'doc-site';
const PREFIX = `sitegw/${SITE}`;
const Q = 15 * 60_000;
const TOPICS = ['topology', 'devices/+/availability', 'status', 'telemetry', 'grid-events', 'cmd/resync/response'].map(
  (t) => `${PREFIX}/${t}`,
);
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

interface Held {
  seq: number;
  /** `written`, or `time` from a gateway before 2.2.0 (mqtt-contract.md "Asking for a hole") */
  at: number;
  time: number;
  resync: boolean;
}

/** The rules of docs/mqtt-contract.md for one site, kept in memory. */
class DocConsumer {
  private client: MqttClient | null = null;
  readonly contract = loadContract(PREFIX, { open: true });
  readonly held = new Map<number, Held>();
  /** seqs of holes closed as filled: "every seq of the answer arrived" */
  readonly filled = new Set<number>();
  readonly invalid: string[] = [];
  readonly answers: Record<string, any>[] = [];
  /** "a delivery with the retain flag set is never entered in the seq ledger" */
  retained = 0;
  lastSeq: number | null = null;
  statusTime = 0;
  online = false;
  /** telemetry keys `deviceId|start` */
  readonly buckets = new Set<string>();

  async connect(url: string): Promise<void> {
    // "QoS 1 on every subscription"; "clean start is fine"
    this.client = await mqtt.connectAsync(url, { protocolVersion: 5, clean: true, reconnectPeriod: 0 });
    this.client.on('message', (topic, payload, packet) => this.take(topic, payload, packet));
    await this.subscribe();
  }

  /** "subscribe to topology, availability and status without $share" (and the rest plainly too: one instance) */
  subscribe() {
    return this.client!.subscribeAsync(TOPICS, { qos: 1 });
  }

  unsubscribe() {
    return this.client!.unsubscribeAsync(TOPICS);
  }

  async disconnect(): Promise<void> {
    await this.client?.endAsync();
    this.client = null;
  }

  private take(topic: string, payload: Buffer, packet: IPublishPacket): void {
    const body = JSON.parse(payload.toString());
    this.invalid.push(...this.contract.check(topic, body));
    if (topic.endsWith('/status')) {
      // "The status": lastSeq only grows what the consumer knows was written
      if (typeof body.lastSeq === 'number') this.lastSeq = Math.max(this.lastSeq ?? 0, body.lastSeq);
      if (typeof body.lastSeq === 'number') this.statusTime = Date.parse(body.time);
      this.online = body.state === 'online';
      return;
    }
    if (topic.endsWith('/cmd/resync/response')) {
      this.answers.push(body);
      return;
    }
    if (packet.retain) {
      this.retained++;
      return;
    }
    const at = Date.parse(body.written ?? body.time);
    this.held.set(body.seq, {
      seq: body.seq,
      at,
      time: Date.parse(body.time),
      resync: typeof body.resync === 'string',
    });
    if (topic.endsWith('/telemetry'))
      for (const e of body.entries) this.buckets.add(`${e.deviceId}|${e.interval.split('/')[0]}`);
  }

  /** "the space between two runs is a hole", and "a hole from its highest + 1 to lastSeq" */
  holes(): { from: number; to: number; before: Held; after: Held | null }[] {
    const seqs = [...this.held.keys(), ...this.filled].sort((a, b) => a - b);
    const at = (q: number) =>
      this.held.get(q) ?? this.held.get([...this.held.keys()].filter((k) => k < q).sort((a, b) => b - a)[0]!)!;
    const out: { from: number; to: number; before: Held; after: Held | null }[] = [];
    for (let i = 1; i < seqs.length; i++)
      if (seqs[i]! > seqs[i - 1]! + 1)
        out.push({ from: seqs[i - 1]! + 1, to: seqs[i]! - 1, before: at(seqs[i - 1]!), after: at(seqs[i]!) });
    const top = seqs.at(-1);
    if (top !== undefined && this.lastSeq !== null && this.lastSeq > top)
      out.push({ from: top + 1, to: this.lastSeq, before: at(top), after: null });
    return out;
  }

  /** "floor(written(A), 15 min) − 30 min to floor(written(B), 15 min) + 30 min", at most 31 days */
  interval(h: { before: Held; after: Held | null }): string {
    const a = h.before.at;
    const b = h.after?.at ?? this.statusTime;
    const lo = Math.floor(Math.min(a, b) / Q) * Q - 2 * Q;
    const hi = Math.floor(Math.max(a, b) / Q) * Q + 2 * Q;
    return `${iso(Math.max(lo, hi - 31 * 86_400_000))}/${iso(hi)}`;
  }

  /**
   * Asks for every hole and closes each as filled once every seq of its answer arrived (or the
   * answer had none: "a complete answer"); returns the answers.
   */
  async fillHoles(tag: string): Promise<Record<string, any>[]> {
    const answers: Record<string, any>[] = [];
    for (const [i, h] of this.holes().entries()) {
      const a = await this.resync(`${tag}-${i}`, this.interval(h));
      answers.push(a);
      if (a.status !== 'accepted') continue;
      if (a.lastSeq !== null)
        await waitFor(`the seqs of ${tag}-${i}`, () => {
          for (let q = a.firstSeq; q <= a.lastSeq; q++) if (!this.held.has(q)) return false;
          return true;
        });
      for (let q = h.from; q <= h.to; q++) if (!this.held.has(q)) this.filled.add(q);
    }
    return answers;
  }

  /** "ask only while the site's status is online"; waits for the answer to this requestId */
  async resync(requestId: string, interval: string): Promise<Record<string, any>> {
    expect(this.online, 'asked while the site is offline').toBe(true);
    await this.client!.publishAsync(`${PREFIX}/cmd/resync`, JSON.stringify({ requestId, interval }), { qos: 1 });
    return waitFor(`the answer to ${requestId}`, () => this.answers.find((a) => a.requestId === requestId));
  }
}

describe.skipIf(!MOSQUITTO)('a consumer built from the published contract alone, against mosquitto', () => {
  let broker: TestBroker;
  let demo: Awaited<ReturnType<typeof demoSite>>;
  const c = new DocConsumer();
  const up = () => demo.daemon.uplink!;
  /** the gateway's outbox delivered once more than `n` messages, and is empty */
  const delivered = (n: number, more = 1) =>
    waitFor(
      `${more} more messages delivered`,
      () => up().health().delivered >= n + more && up().health().outbox.depth === 0,
    );

  beforeAll(async () => {
    broker = await mosquittoBroker();
    demo = await demoSite({ speed: 600, history: 'PT2H', siteId: SITE, ...uplinkTo(broker) });
    // the gateway has sent its topology and availability (retained) before the consumer exists
    await delivered(0, 3);
  });
  afterAll(async () => {
    await c.disconnect();
    await demo?.cleanup();
    await broker?.close();
  });

  it('keeps retained deliveries out of the seq ledger: no hole at subscribe nor at a resubscribe', async () => {
    await c.connect(broker.url);
    await waitFor('live telemetry', () => c.buckets.size > 0);
    expect(c.retained).toBeGreaterThan(0);
    const before = c.retained;
    await c.unsubscribe();
    await c.subscribe();
    await waitFor('the retained copies again', () => c.retained > before);
    const n = up().health().delivered;
    await delivered(n, 3);
    await waitFor('every seq up to the status lastSeq', () => c.lastSeq !== null && c.holes().length === 0, 90_000);
    expect(c.holes()).toEqual([]);
  });

  it('accepts a schema-valid message with a field from the future', () => {
    const live = c.contract.check(`${PREFIX}/telemetry`, {
      seq: 1,
      written: '2026-11-23T03:31:00Z',
      v: 2,
      time: '2026-11-23T03:15:00Z',
      siteId: SITE,
      stream: 'telemetry-realtime',
      entries: [
        {
          deviceKind: 'meter',
          kind: 'meter',
          deviceId: 'grid-meter__GRID_METER_DERIVED',
          interval: '2026-11-23T03:15:00Z/2026-11-23T03:30:00Z',
          power_W: 412.5,
          reactivePower_var: 12,
        },
      ],
      telemetryDevices: 'partner',
      interval: '2026-11-23T03:15:00Z/2026-11-23T03:30:00Z',
      telemetryInclude: ['default', 'energy'],
      quality: { partial: false },
    });
    expect(live).toEqual([]);
    // and what the gateway really sent validated against the same open schemas
    expect(c.invalid).toEqual([]);
  });

  it('finds a message lost just before the gateway stops from the next status, and gets it back', async () => {
    await c.disconnect();
    const stored = storedBuckets(demo.daemon.ctx.db);
    // at least one bucket close goes to the broker with nobody subscribed: lost for the consumer
    await delivered(up().health().delivered, 2);
    const lost = [...storedBuckets(demo.daemon.ctx.db)].filter((k) => !stored.has(k));
    expect(lost.length).toBeGreaterThan(0);
    const heldTop = Math.max(...c.held.keys());
    await demo.restartDaemon(async () => {
      // the gateway is stopped: the consumer comes back and has only the retained status
      await c.connect(broker.url);
      await waitFor('the offline status', () => !c.online && c.lastSeq !== null && c.lastSeq > heldTop);
      expect(Math.max(...c.held.keys())).toBe(heldTop);
      expect(c.holes()).toEqual([expect.objectContaining({ from: heldTop + 1, to: c.lastSeq, after: null })]);
    });
    await waitFor('the gateway online again', () => c.online);
    const answers = await c.fillHoles('lost-before-stop');
    expect(answers.length).toBeGreaterThan(0);
    for (const a of answers) expect(a).toMatchObject({ status: 'accepted', siteId: SITE });
    expect(lost.filter((k) => !c.buckets.has(k))).toEqual([]);
  });

  it('computes an interval the gateway accepts for every hole, next to resync copies too', async () => {
    const liveA = [...c.held.values()].filter((h) => !h.resync).at(-1)!;
    // resync copies: new seqs, old `time`
    const first = Math.floor((demo.prefilledUntil - 7_200_000) / Q) * Q;
    const r0 = await c.resync('copies', `${iso(first)}/${iso(first + 4 * Q)}`);
    expect(r0).toMatchObject({ status: 'accepted' });
    await waitFor('the copies', () => c.held.has(r0.lastSeq));
    const copy = c.held.get(r0.lastSeq)!;
    expect(copy.resync).toBe(true);
    expect(copy.time).toBeLessThan(liveA.time - 3_600_000);
    // a live message before a copy: the rule with `time` gives an interval that ends before it
    // starts, which the gateway refuses; with `written` it is accepted
    const byTime = `${iso(Math.floor(liveA.time / Q) * Q - 2 * Q)}/${iso(Math.floor(copy.time / Q) * Q + 2 * Q)}`;
    expect(await c.resync('by-time', byTime)).toMatchObject({ status: 'error', code: 'INVALID_INTERVAL' });
    expect(await c.resync('by-written', c.interval({ before: liveA, after: copy }))).toMatchObject({
      status: 'accepted',
    });
    // and holes among the copies' seqs: the messages while the consumer is away are lost
    await c.disconnect();
    // two seqs above the consumer's highest, both at the broker: messages it cannot have had. (A
    // count of deliveries could include messages in flight before it left, which it did receive:
    // then nothing was lost and no hole came, seen on a loaded machine.)
    const away = Math.max(...c.held.keys());
    await waitFor(
      'two messages written after the consumer left, at the broker',
      () => up().lastSeq() >= away + 2 && up().health().outbox.depth === 0,
    );
    await c.connect(broker.url);
    // the status's lastSeq or the next live message shows the hole
    await waitFor('a hole again', () => c.holes().length > 0);
    for (const a of await c.fillHoles('hole')) expect(a).toMatchObject({ status: 'accepted' });
    expect(c.holes()).toEqual([]);
    expect(c.invalid).toEqual([]);
  });
});
