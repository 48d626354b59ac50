import mqtt, { type IPublishPacket, type MqttClient } from 'mqtt';
import { TOPIC, topicOf } from '../uplink/topics.js';
import { type GapPolicy, scanGaps } from './gaps.js';
import { parseMessage, SEQ_SUFFIXES } from './parse.js';
import { ConsumerStore } from './store.js';

export interface ConsumerOptions {
  broker: string;
  /** shared-subscription group: instances with the same group split the fleet's messages */
  group: string;
  /** the sites' topic prefixes as a filter, e.g. `sitegw/+` for the default `sitegw/{siteId}` */
  filter: string;
  /** a SQLite file, or a `postgres://` URL */
  db: string;
  clientId?: string;
  username?: string;
  password?: string;
  gaps?: Partial<GapPolicy>;
  /** how often the ledger is scanned for holes, real ms */
  scanMs?: number;
  log?: (line: string) => void;
}

export interface ConsumerStats {
  received: number;
  processed: number;
  duplicates: number;
  ignored: number;
  /** retained deliveries: kept as state, not counted in the seq ledger */
  retained: number;
  resyncRequests: number;
  holesFound: number;
  holesClosed: number;
}

/**
 * Topic levels below a site's prefix that the consumer reads (docs/asyncapi.yaml): the
 * retained ones plainly (MQTT 5 leaves retained delivery on shared subscriptions to the broker,
 * docs/mqtt-contract.md "Subscribing"), the others shared by the group.
 */
const RETAINED = [TOPIC.topology, TOPIC.availability('+'), TOPIC.status];
const SHARED = [...SEQ_SUFFIXES.filter((s) => !RETAINED.includes(s)), TOPIC.resyncResponse];

/**
 * The reference consumer of the uplink (docs/mqtt-contract.md): MQTT 5 shared subscriptions so
 * that N instances split a fleet, de-duplication by seq per site, telemetry upserted by deviceId
 * and interval, and holes in a site's seqs asked for again with cmd/resync. Instances that
 * share a group must share the database: a site's messages are spread over all of them.
 */
export class Consumer {
  private opened: ConsumerStore | null = null;
  readonly stats: ConsumerStats = {
    received: 0,
    processed: 0,
    duplicates: 0,
    ignored: 0,
    retained: 0,
    resyncRequests: 0,
    holesFound: 0,
    holesClosed: 0,
  };
  private client: MqttClient | null = null;
  private scanTimer: NodeJS.Timeout | null = null;
  private readonly policy: GapPolicy;
  private readonly ignoredReasons = new Set<string>();
  private readonly log: (line: string) => void;
  private scanning: Promise<void> | null = null;

  constructor(private readonly opts: ConsumerOptions) {
    this.policy = { waitMs: opts.gaps?.waitMs ?? 30_000, retryMs: opts.gaps?.retryMs ?? 120_000 };
    this.log = opts.log ?? (() => undefined);
  }

  /** the ledger, open between start() and stop() */
  get store(): ConsumerStore {
    if (!this.opened) throw new Error('the consumer is not started');
    return this.opened;
  }

  get filters(): string[] {
    return [
      ...SHARED.map((s) => `$share/${this.opts.group}/${this.opts.filter}/${s}`),
      ...RETAINED.map((s) => `${this.opts.filter}/${s}`),
    ];
  }

  async start(): Promise<void> {
    const o = this.opts;
    this.opened = await ConsumerStore.open(o.db);
    // clean start, no session kept: a stopped instance's share goes to the others at once, and
    // what it had in flight is found as a hole and asked for again
    const client = await mqtt.connectAsync(o.broker, {
      protocolVersion: 5,
      clean: true,
      reconnectPeriod: 1000,
      ...(o.clientId ? { clientId: o.clientId } : {}),
      ...(o.username !== undefined ? { username: o.username } : {}),
      ...(o.password !== undefined ? { password: o.password } : {}),
    });
    this.client = client;
    // mqtt.js sends a QoS 1 message's PUBACK when handleMessage calls back, and hands over the
    // next message only then: so a message is acknowledged once its transaction committed (a
    // crash before that gets it redelivered or leaves a hole, never acknowledged and lost)
    client.handleMessage = (packet, done) => {
      void this.onMessage(packet).finally(() => done());
    };
    client.on(
      'connect',
      () => void this.subscribe().catch((err: Error) => this.log(`subscribe failed: ${err.message}`)),
    );
    client.on('error', (err) => this.log(`broker: ${err.message}`));
    await this.subscribe();
    this.scanTimer = setInterval(() => this.scan(), o.scanMs ?? 1000);
  }

  private async subscribe(): Promise<void> {
    const granted = await this.client!.subscribeAsync(this.filters, { qos: 1 });
    const refused = granted.filter((g) => g.qos > 2);
    if (refused.length > 0)
      throw new Error(
        `the broker refused ${refused.map((g) => g.topic).join(', ')} (shared subscriptions need MQTT 5 and a broker that has them)`,
      );
  }

  async stop(): Promise<void> {
    if (this.scanTimer) clearInterval(this.scanTimer);
    this.scanTimer = null;
    await this.client?.endAsync();
    this.client = null;
    await this.scanning;
    await this.opened?.close();
    this.opened = null;
  }

  /** One pass of gap detection now (also run every scanMs); a pass still running is not doubled. */
  scan(now = Date.now()): Promise<void> {
    this.scanning ??= this.scanOnce(now).finally(() => {
      this.scanning = null;
    });
    return this.scanning;
  }

  private async scanOnce(now: number): Promise<void> {
    if (!this.opened) return;
    try {
      const r = await scanGaps(
        this.opened,
        this.policy,
        (prefix, requestId, interval) => this.requestResync(prefix, requestId, interval),
        now,
      );
      this.stats.holesFound += r.found;
      this.stats.holesClosed += r.closed;
    } catch (err) {
      this.log(`gap scan failed: ${(err as Error).message}`);
    }
  }

  private requestResync(prefix: string, requestId: string, interval: string): void {
    this.stats.resyncRequests++;
    this.log(`resync ${prefix} ${interval} (${requestId})`);
    this.client?.publish(topicOf(prefix, TOPIC.resync), JSON.stringify({ requestId, interval }), { qos: 1 });
  }

  /**
   * Never throws: a message that cannot be stored is logged and acknowledged, and its seq, never
   * entered in the ledger, is found as a hole and asked for again.
   */
  private async onMessage(packet: IPublishPacket): Promise<void> {
    const topic = packet.topic;
    const payload = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload;
    this.stats.received++;
    try {
      const p = parseMessage(topic, payload);
      if (p.kind === 'ignored') {
        this.stats.ignored++;
        if (!this.ignoredReasons.has(p.reason)) {
          this.ignoredReasons.add(p.reason);
          this.log(`ignored a message on ${topic}: ${p.reason}`);
        }
      } else if (p.kind === 'status') {
        await this.store.noteStatus(p.siteId, p.prefix, p.online, p.lastSeq, p.time, Date.now());
      } else if (p.kind === 'response') {
        if (p.status === 'accepted' && p.requestId) await this.store.accepted(p.requestId, p.firstSeq, p.lastSeq);
        else if (p.status !== 'accepted')
          this.log(`resync ${p.requestId ?? '?'} refused by ${p.prefix}: ${p.code ?? p.status}`);
      } else if (packet.retain) {
        // the broker's stored copy, sent at subscribe: state, not a message of the seq ledger
        if (p.msg.kind === 'state') await this.store.keepState(p.siteId, p.seq, p.msg);
        this.stats.retained++;
      } else if (await this.store.accept(p.siteId, p.prefix, p.seq, p.time, p.msg, Date.now())) {
        this.stats.processed++;
      } else {
        this.stats.duplicates++;
      }
    } catch (err) {
      this.log(`storing a message from ${topic} failed: ${(err as Error).message}`);
    }
  }
}
