import type { Database } from 'better-sqlite3';
import type { IConnackPacket, IPublishPacket, MqttClient } from 'mqtt';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { UplinkConfig } from '../config/types.js';
import type { Control } from '../control/control.js';
import type { Clock, ClockTimer } from '../core/clock.js';
import type { ClosedBucket, EventBus } from '../core/events.js';
import type { ConnectionStatus, Feature, FeatureHealth } from '../core/feature.js';
import type { GridOperatorStatus } from '../gridop/client.js';
import { gridOperatorBody } from '../gridop/status-body.js';
import { limitsStatusBody, type SiteLimitsStatus } from '../limits/status.js';
import type { Site } from '../site/site.js';
import { buildTopology } from '../site/topology.js';
import { writeTx } from '../store/db.js';
import { enqueue, type OutboxMessage, outboxDrops, trim } from '../store/outbox.js';
import { holdFold } from '../store/recent-buckets.js';
import { isStorageFault } from '../store/storage-faults.js';
import { formatInstant } from '../telemetry/interval.js';
import { type CommandAnswer, commandKindOf, commandReply, retainedRefusal } from './commands.js';
import { Drainer } from './drain.js';
import { safeUrl, type UplinkError } from './errors.js';
import { publishDelayMs } from './jitter.js';
import { answerLimitsCommand } from './limits-command.js';
import { MqttLink } from './link.js';
import { availabilityBody, gridEventBody, type PayloadContext, payloadContext, topologyBody } from './payloads.js';
import { Pending } from './pending.js';
import { answerPlanCommand } from './plan-command.js';
import { answerResync, type ResyncAnswer } from './resync.js';
import { SeqCounter } from './seq-counter.js';
import { PAYLOAD_VERSION, TOPIC, topicOf } from './topics.js';

export interface UplinkDeps {
  config: UplinkConfig;
  db: Database;
  site: Site;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  socScale: 'percent' | 'fraction';
  version: string;
  /** the daemon's metrics registry: the outbox depth and connection go there while the uplink runs */
  registry?: Registry;
  /** the seq ceiling's file beside the database (store/seq-ceiling.ts); without it seqs follow the database alone */
  seqFile?: string;
  /** whether the wall clock can be right (not before the build): seqs are never seeded from one that cannot */
  clockPlausible?: () => boolean;
  /**
   * the time to stamp state messages with (core/time-labels.ts): null while the clock can label
   * nothing (before the build), when they wait; after a forward step not yet confirmed, the time
   * the monotonic clock kept, never the stepped-to one. Without it, the wall clock
   */
  labelTime?: () => number | null;
  /** battery control, for plans on cmd/plan (started after the uplink, hence a getter) */
  control?: () => Control | undefined;
  /** the site limits (started after this feature), for the status message; absent: no limits in it */
  limits?: () => { status(): SiteLimitsStatus } | undefined;
  /** the grid operator's client (started after this feature), for the status message; absent: not in it */
  gridOperator?: () => { status(): GridOperatorStatus } | undefined;
}

/** What the installer-facing health probe and status page show; plain data. */
export interface UplinkHealth {
  broker: string;
  connected: boolean;
  /** daemon clock, ISO; null before the first connection */
  connectedSince: string | null;
  outbox: { depth: number; bytes: number; oldestUndeliveredAgeSeconds: number | null; inFlight: number };
  delivered: number;
  dropped: { byAge: number; bySize: number; lastAt: string | null };
  lastError: { code: string; message: string; at: string } | null;
  /** /healthz: not connected, with how many messages wait */
  problems: string[];
  /** the status page's uplink section */
  connection: ConnectionStatus;
}

const METRICS = { outbox: 'sitegw_uplink_outbox_messages', connected: 'sitegw_uplink_connected' } as const;

/** How often the outbox bounds are applied besides after every write, real ms. */
const TRIM_EVERY_MS = 60_000;

/**
 * The MQTT uplink: messages go into the SQLite outbox in the transaction that produces their
 * data (bucket close, grid event) or when state changes (topology, device availability), and a
 * Drainer publishes them whenever a connection is up. The daemon never waits for the broker.
 */
export class Uplink implements Feature {
  readonly name = 'uplink';
  private readonly ctx: PayloadContext;
  private readonly prefix: string;
  private link: MqttLink | null = null;
  /** the connected client, null while there is none */
  private client: MqttClient | null = null;
  private drainer: Drainer | null = null;
  private pending: Pending | null = null;
  private readonly seqs: SeqCounter;
  private unsubscribe: (() => void)[] = [];
  private statusTimer: NodeJS.Timeout | null = null;
  private trimTimer: NodeJS.Timeout | null = null;
  private lastTopology = '';
  private lastError: UplinkError | null = null;
  private connectedSince: number | null = null;
  private readonly startedAt: number;
  private kickQueued = false;
  /** this site's publish jitter after a bucket close, daemon-clock ms */
  private readonly closeDelayMs: number;
  private releaseTimer: ClockTimer | null = null;
  /** state messages (topology, availability) that waited for a safe seq or for the disk, oldest first */
  /** state messages not yet in the outbox, built once there is a time to stamp them with */
  private waiting: StateMessage[] = [];
  /** the status was not published: the clock could not stamp it */
  private statusWaiting = false;
  /** the data disk refused the last state messages: said once, not at every device health change */
  private appendRefused = false;
  /** the same for the outbox bounds, tried every minute */
  private boundsRefused = false;

  constructor(private readonly deps: UplinkDeps) {
    this.prefix = deps.config.topicPrefix;
    this.ctx = payloadContext(deps.site, deps.socScale);
    this.startedAt = performance.now();
    this.closeDelayMs = publishDelayMs(deps.site.id, deps.config.publishJitterSeconds);
    this.seqs = new SeqCounter(deps.db, () => deps.clock.now(), deps.clockPlausible);
  }

  start(): void {
    const { bus, config, db, log } = this.deps;
    if (this.deps.seqFile) this.seqs.seed(this.deps.seqFile, log);
    const pending = (this.pending = new Pending(db, this.ctx, () => this.deps.clock.now()));
    // the day's fold keeps the buckets whose telemetry is not durably acknowledged (docs/uplink.md)
    holdFold(db, {
      through: () => pending.through,
      now: () => this.deps.clock.now(),
      maxAgeMs: config.outbox.maxAgeDays * 86_400_000,
    });
    this.drainer = new Drainer(pending, {
      prefix: this.prefix,
      maxInflight: config.replay.maxInflight,
      ratePerSecond: config.replay.messagesPerSecond,
      onFault: (err) =>
        log.error({ err }, 'uplink: reading or trimming the outbox failed; its messages wait for the next try'),
      onRefused: (seq, topic, err) =>
        this.fail({
          code: 'PUBLISH_REFUSED',
          message: `the broker refused message ${seq} on ${topic} (${err.message}): ask the broker operator to allow this gateway to publish below ${this.prefix}/`,
        }),
    });
    this.unsubscribe = [
      // inside the producers' transactions: a failed outbox write rolls the bucket or event back too
      bus.inTransaction('bucketsClosing', (closed: readonly ClosedBucket[]) => this.hold(this.stampClose(closed))),
      // emitted after the close's commit: its seqs are taken for good (seq-counter.ts)
      bus.on('bucketsClosed', () => this.seqs.confirm()),
      bus.inTransaction('gridEventRecording', (e) => void this.write([gridEventBody(this.ctx, e)])),
      bus.on('deviceHealth', (h) => {
        this.append([(time) => availabilityBody(this.ctx, time, h)]);
        this.checkTopology();
      }),
      // state messages held while the clock was implausible go with the first poll it labels
      bus.on('reading', () => {
        if (this.waiting.length > 0 && this.stampTime() !== null) this.append([]);
        if (this.statusWaiting && this.stampTime() !== null) this.publishStatus();
      }),
      bus.on('streamsChanged', () => this.checkTopology()),
    ];
    this.checkTopology();
    this.applyBounds();
    this.trimTimer = setInterval(() => {
      if (this.waiting.length > 0) this.append([]);
      this.applyBounds();
    }, TRIM_EVERY_MS);
    this.trimTimer.unref();
    this.link = new MqttLink(
      config,
      {
        topic: this.topic(TOPIC.status),
        payload: JSON.stringify({ v: PAYLOAD_VERSION, state: 'offline', siteId: this.ctx.siteId }),
      },
      {
        connected: (client, connack) => this.onConnected(client, connack),
        disconnected: () => this.onDisconnected(),
        message: (topic, payload, packet) => this.onCommand(topic, payload, packet),
        failed: (e) => this.fail(e),
        faulted: (handler, err) =>
          log.error({ err, handler }, 'uplink: handling an MQTT event failed; the connection goes on'),
      },
    );
    this.link.start();
    this.registerMetrics();
    log.info(
      {
        broker: safeUrl(config.url),
        prefix: this.prefix,
        clientId: config.clientId,
        mqtt: config.protocolVersion === 5 ? '5' : '3.1.1',
      },
      'uplink started',
    );
  }

  async stop(): Promise<void> {
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
    for (const name of Object.values(METRICS)) this.deps.registry?.removeSingleMetric(name);
    if (this.statusTimer) clearInterval(this.statusTimer);
    if (this.trimTimer) clearInterval(this.trimTimer);
    this.statusTimer = this.trimTimer = null;
    if (this.releaseTimer) this.deps.clock.clearTimeout(this.releaseTimer);
    this.releaseTimer = null;
    // a clean stop says so itself; the will only covers a crash or a lost connection
    const time = this.stampTime();
    await this.link?.stop(
      time === null ? undefined : { topic: this.topic(TOPIC.status), payload: this.statusPayload('offline', time) },
    );
    try {
      this.drainer?.flush();
      this.pending?.save();
    } catch (err) {
      // the rows stay in the outbox and go once more after the next start (seq de-duplication)
      this.deps.log.warn({ err }, 'uplink: deleting the delivered messages failed at stop');
    }
    // the hold stays with its last position: a close during the daemon's stop (after this one) must
    // not fold what was not acknowledged; a start without an uplink holds nothing
    this.drainer?.detach();
    this.drainer = null;
    this.pending = null;
    this.link = null;
    this.client = null;
  }

  health(): UplinkHealth & FeatureHealth {
    const { db, clock, config } = this.deps;
    const s = this.stats();
    const d = outboxDrops(db);
    const connected = this.link?.connected ?? false;
    const lastError = this.lastError?.message ?? null;
    const why = lastError ? ` (${lastError})` : '';
    return {
      broker: safeUrl(config.url),
      connected,
      connectedSince: this.connectedSince === null ? null : formatInstant(this.connectedSince),
      outbox: {
        depth: s.depth,
        bytes: s.bytes,
        oldestUndeliveredAgeSeconds:
          s.oldestAt === null ? null : Math.max(0, Math.round((clock.now() - s.oldestAt) / 1000)),
        inFlight: this.drainer?.inFlight ?? 0,
      },
      delivered: this.drainer?.delivered ?? 0,
      dropped: { byAge: d.byAge, bySize: d.bySize, lastAt: d.lastAt === null ? null : formatInstant(d.lastAt) },
      lastError: this.lastError && {
        code: this.lastError.code,
        message: this.lastError.message,
        at: formatInstant(this.lastError.at),
      },
      problems: connected ? [] : [`the uplink is not connected${why}; ${s.depth} messages wait in the outbox`],
      connection: { connected, outboxDepth: s.depth, lastError },
    };
  }

  /** The highest seq written (0 before the first): the status message's `lastSeq`. */
  lastSeq(): number {
    return this.seqs.current();
  }

  private registerMetrics(): void {
    const registers = this.deps.registry ? [this.deps.registry] : [];
    if (registers.length === 0) return;
    const self = this;
    new Gauge({
      name: METRICS.outbox,
      help: 'Messages waiting in the MQTT outbox',
      registers,
      collect() {
        this.set(self.stats().depth);
      },
    });
    new Gauge({
      name: METRICS.connected,
      help: '1 while the MQTT uplink is connected',
      registers,
      collect() {
        this.set(self.link?.connected ? 1 : 0);
      },
    });
  }

  private topic(suffix: string): string {
    return topicOf(this.prefix, suffix);
  }

  /** Inside a producer's transaction: the rows commit with its data. Publishing waits for the commit. */
  private write(msgs: OutboxMessage[]): number[] {
    if (msgs.length === 0) return [];
    // thrown inside a bucket close, this rolls it back: its buckets wait in memory and come again
    this.seqs.beforeOutbox(msgs.length);
    const seqs = enqueue(this.deps.db, msgs, this.deps.clock.now());
    this.afterCommit();
    return seqs;
  }

  /**
   * Inside the close's transaction: its telemetry is not copied into the outbox, its rows carry
   * the seqs (seq-counter.ts); the drainer reads them from there (pending.ts).
   */
  private stampClose(closed: readonly ClosedBucket[]): number[] {
    const seqs = this.seqs.stampClose(this.ctx, closed, this.deps.clock.now());
    if (seqs.length > 0) this.afterCommit();
    return seqs;
  }

  /** What waits, the outbox's and the telemetry's (without a drainer, the outbox's and every stamped row's). */
  private stats() {
    return (this.pending ?? new Pending(this.deps.db, this.ctx, () => this.deps.clock.now())).stats();
  }

  /**
   * Runs `fill` with the outbox's drain paused, then lets it go: the history pre-fill yields to the
   * event loop (so a Ctrl-C is heard), and a drain running beside it would split the CPU and send
   * the day out while it is still being written, as a trickle instead of the replay it is.
   */
  async whileFilling<T>(fill: () => Promise<T>): Promise<T> {
    this.drainer?.pause();
    try {
      return await fill();
    } finally {
      this.drainer?.resume();
    }
  }

  /**
   * Publish jitter: a bucket close's messages wait this site's delay, so the fleet's gateways do
   * not all publish at the same second. Later messages wait behind them (seq order is kept).
   */
  private hold(seqs: number[]): void {
    if (this.closeDelayMs === 0 || seqs.length === 0 || !this.drainer) return;
    this.drainer.hold(seqs[0]!);
    this.releaseTimer ??= this.deps.clock.setTimeout(() => {
      this.releaseTimer = null;
      this.drainer?.release();
    }, this.closeDelayMs);
  }

  /** The time state messages are stamped with now; null while nothing may be labelled. */
  private stampTime(): number | null {
    return this.deps.labelTime ? this.deps.labelTime() : this.deps.clock.now();
  }

  /** Outside any transaction (state changes the uplink itself notices). */
  private append(msgs: StateMessage[]): void {
    const all = this.waiting.length > 0 ? [...this.waiting.splice(0), ...msgs] : msgs;
    const time = this.stampTime();
    try {
      if (time === null || !this.seqs.known()) {
        // bounded: state messages, the latest matter (the broker retains them)
        this.waiting = latestPerTopic(all);
        return;
      }
      writeTx(this.deps.db, () => this.write(all.map((m) => m(time))));
    } catch (err) {
      if (!isStorageFault(err)) {
        this.deps.log.error({ err }, 'uplink: writing to the outbox failed');
        return;
      }
      // a full data disk: they wait (a topology change is sent once, so it must not be dropped)
      // and go with the next state message or the next minute's try; each topic is retained, so
      // its latest message is all a consumer would keep: one per topic, which bounds them
      this.waiting = latestPerTopic(all);
      if (!this.appendRefused)
        this.deps.log.error({ err }, 'uplink: writing state messages to the outbox failed; they wait in memory');
      this.appendRefused = true;
      return;
    }
    if (this.appendRefused) this.deps.log.info('uplink: the state messages that waited are in the outbox');
    this.appendRefused = false;
  }

  private afterCommit(): void {
    if (this.kickQueued) return;
    this.kickQueued = true;
    setImmediate(() => {
      this.kickQueued = false;
      if (!this.drainer) return;
      this.applyBounds();
      this.drainer.kick();
    });
  }

  private checkTopology(): void {
    const site = this.deps.site;
    const compact = buildTopology(site, true);
    const expanded = buildTopology(site, false);
    const key = JSON.stringify([compact, expanded]);
    if (key === this.lastTopology) return;
    this.lastTopology = key;
    this.append([(time) => topologyBody(this.ctx, time, compact, expanded)]);
  }

  private applyBounds(): void {
    const { db, clock, config, log } = this.deps;
    const now = clock.now();
    try {
      const maxBytes = config.outbox.maxMegabytes * 1_000_000;
      const r = trim(db, now - config.outbox.maxAgeDays * 86_400_000, maxBytes, now, this.pending?.through);
      this.pending?.dropped(r.telemetry);
      if (r.byAge + r.bySize > 0) {
        log.warn(
          {
            byAge: r.byAge,
            bySize: r.bySize,
            maxAgeDays: config.outbox.maxAgeDays,
            maxMegabytes: config.outbox.maxMegabytes,
          },
          'uplink outbox full: oldest undelivered messages dropped',
        );
        this.publishStatus();
      }
      this.boundsRefused = false;
    } catch (err) {
      // a read-only data disk refuses even a delete of nothing: said once, not every minute
      if (isStorageFault(err) && this.boundsRefused) return;
      this.boundsRefused = isStorageFault(err);
      log.error({ err }, 'uplink: applying the outbox bounds failed');
    }
  }

  private fail(e: Omit<UplinkError, 'at'>): void {
    const before = this.lastError;
    this.lastError = { ...e, at: this.deps.clock.now() };
    // once per kind of failure in a row, not once per retry
    if (before?.code !== e.code || before.message !== e.message)
      this.deps.log.warn({ code: e.code }, `uplink: ${e.message}`);
  }

  private onConnected(client: MqttClient, connack: IConnackPacket): void {
    this.client = client;
    this.connectedSince = this.deps.clock.now();
    this.deps.log.info(
      { broker: safeUrl(this.deps.config.url), receiveMaximum: connack.properties?.receiveMaximum },
      'uplink connected',
    );
    this.lastError = null;
    this.publishStatus();
    if (this.statusTimer) clearInterval(this.statusTimer);
    this.statusTimer = setInterval(() => this.publishStatus(), this.deps.config.statusIntervalSeconds * 1000);
    this.statusTimer.unref();
    // Retain As Published (MQTT 5; 3.1.1 has no such option): a command published with the retain
    // flag while the gateway is connected keeps it on delivery and is refused (commands.ts)
    client.subscribe(
      [this.topic(TOPIC.resync), this.topic(TOPIC.plan), this.topic(TOPIC.limits)],
      { qos: 1, rap: true },
      (err) => {
        if (err)
          this.fail({
            code: 'NOT_AUTHORIZED',
            message: `the broker refused the subscription to ${this.topic(TOPIC.resync)}; resync, plan and limits commands cannot reach the gateway: ${err.message}`,
          });
      },
    );
    this.drainer?.attach(client, connack.properties?.receiveMaximum);
  }

  private onDisconnected(): void {
    this.client = null;
    if (this.statusTimer) clearInterval(this.statusTimer);
    this.statusTimer = null;
    this.drainer?.detach();
    this.deps.log.info('uplink disconnected; messages wait in the outbox');
  }

  private statusPayload(state: 'online' | 'offline', time: number): string {
    const { site, clock, db, version } = this.deps;
    const s = this.stats();
    const d = outboxDrops(db);
    const devices = [...site.devices.values()];
    const limits = this.deps.limits?.();
    const gridop = this.deps.gridOperator?.();
    return JSON.stringify({
      v: PAYLOAD_VERSION,
      state,
      time: formatInstant(time),
      siteId: site.id,
      version,
      uptimeSeconds: Math.round((performance.now() - this.startedAt) / 1000),
      devices: devices.length,
      devicesOnline: devices.filter((x) => x.online).length,
      outbox: {
        depth: s.depth,
        oldestUndeliveredAgeSeconds:
          s.oldestAt === null ? null : Math.max(0, Math.round((clock.now() - s.oldestAt) / 1000)),
      },
      dropped: { byAge: d.byAge, bySize: d.bySize },
      // every seq up to here was written: one a consumer lacks is on its way or lost (a hole)
      // the highest seq ever written (0 before the first): the outbox counter
      lastSeq: this.lastSeq() || null,
      // the site limits in force, the cap and the curtailed power (docs/limits.md "Where it shows")
      ...(limits ? { limits: limitsStatusBody(limits.status()) } : {}),
      // whether the operator's server answers, the control in force and until when (docs/grid-operator.md)
      ...(gridop ? { gridOperator: gridOperatorBody(gridop.status()) } : {}),
    });
  }

  /** Retained, QoS 1, straight to the broker (not through the outbox: it is the present state only). */
  private publishStatus(): void {
    // also run by a timer, where a store fault would otherwise reach the process uncaught
    // stamped like every state message: none while the clock is before the build (the first
    // poll it labels publishes it, with the state messages that waited)
    const time = this.stampTime();
    if (time === null) {
      this.statusWaiting = true;
      return;
    }
    this.statusWaiting = false;
    try {
      this.client?.publish(this.topic(TOPIC.status), this.statusPayload('online', time), { qos: 1, retain: true });
    } catch (err) {
      this.deps.log.error({ err }, 'uplink: publishing the status failed; retried at the next interval');
    }
  }

  /**
   * A command on cmd/plan, cmd/limits or cmd/resync: answered on its response topic with the
   * stored plan or limit schedule, the queued resync or a named error (commands.ts for the rules
   * they share).
   */
  private onCommand(topic: string, payload: Buffer, packet: IPublishPacket): void {
    const kind = commandKindOf(topic, (t) => this.topic(t));
    if (kind === null) return;
    // an empty retained message is someone clearing a retained command: nothing to answer
    if (packet.retain && payload.length === 0) return;
    let answer: CommandAnswer;
    try {
      answer = packet.retain
        ? retainedRefusal(payload)
        : kind === 'plan'
          ? answerPlanCommand(this.deps.control?.(), payload)
          : kind === 'limits'
            ? answerLimitsCommand(this.deps.db, this.deps.clock.now(), payload)
            : answerResync(
                {
                  db: this.deps.db,
                  site: this.deps.site,
                  ctx: this.ctx,
                  outboxMaxBytes: this.deps.config.outbox.maxMegabytes * 1_000_000,
                  enqueue: (messages) => writeTx(this.deps.db, () => this.write(messages)),
                },
                payload,
              );
    } catch (err) {
      this.deps.log.error({ err }, `uplink ${kind} command failed`);
      answer = {
        requestId: null,
        status: 'error',
        code: 'INTERNAL_ERROR',
        message: 'the gateway could not answer this command; its log has the details',
      };
    }
    if (answer.status === 'error')
      this.deps.log.warn(
        { code: answer.code, requestId: answer.requestId },
        `uplink ${kind} refused: ${answer.message}`,
      );
    else if (kind !== 'resync') this.deps.log.info({ requestId: answer.requestId }, `uplink ${kind} stored`);
    else {
      const { requestId, interval, buckets, gridEvents, messages } = answer as ResyncAnswer & { status: 'accepted' };
      this.deps.log.info({ requestId, interval, buckets, gridEvents, messages }, 'uplink resync queued');
    }
    const reply = commandReply(this.prefix, this.ctx.siteId, kind, packet, answer);
    this.client?.publish(reply.topic, reply.payload, {
      qos: 1,
      ...(reply.correlationData ? { properties: { correlationData: reply.correlationData } } : {}),
    });
  }
}

/** The last message of each topic, in the order of those last ones. */
/** A state message, built with the time it is stamped with once there is one. */
type StateMessage = (time: number) => OutboxMessage;

/** The latest per topic (each is retained: a consumer keeps only the latest). */
function latestPerTopic(msgs: readonly StateMessage[]): StateMessage[] {
  const last = new Map<string, StateMessage>();
  for (const m of msgs) {
    const { topic } = m(0);
    last.delete(topic);
    last.set(topic, m);
  }
  return [...last.values()];
}
