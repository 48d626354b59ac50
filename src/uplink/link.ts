import { readFileSync } from 'node:fs';
import mqtt, { type IClientOptions, type IConnackPacket, type IPublishPacket, type MqttClient } from 'mqtt';
import type { MqttConnectionConfig } from '../config/types.js';
import { doubling } from '../core/backoff.js';
import { describeError, safeUrl, type UplinkError } from './errors.js';
import { reconnectDelayMs } from './jitter.js';

export interface LinkEvents {
  connected(client: MqttClient, connack: IConnackPacket): void;
  disconnected(): void;
  message(topic: string, payload: Buffer, packet: IPublishPacket): void;
  /** a failed attempt or a lost connection, in installer words */
  failed(e: Omit<UplinkError, 'at'>): void;
  /** one of the handlers above threw: a bug or a store fault, logged; the connection goes on */
  faulted(handler: string, err: unknown): void;
}

export interface Will {
  topic: string;
  payload: string;
}

const FIRST_RETRY_MS = 1000;

/**
 * One MQTT connection at a time, each on a fresh client: mqtt.js's own reconnect would resend
 * its in-memory copies of unacknowledged messages next to the outbox's, so reconnecting is done
 * here, with a backoff that starts at 1 s and doubles up to reconnectMaxSeconds (real time), each
 * wait a random point in the upper half of its step (jitter.ts).
 * Clean start: the outbox, not the broker's session, is what carries undelivered messages.
 */
export class MqttLink {
  private client: MqttClient | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  /** retries since the last connect: each waits twice the one before, up to reconnectMaxSeconds */
  private failures = 0;
  private stopping = false;
  connected = false;
  readonly host: string;

  private readonly events: LinkEvents;

  /** `section` is the site.yaml section the connection comes from, named in the failure advice */
  constructor(
    private readonly cfg: MqttConnectionConfig,
    private readonly will: Will,
    events: LinkEvents,
    section: 'uplink' | 'homeassistant' = 'uplink',
  ) {
    this.host = safeUrl(cfg.url).replace(/^[a-z]+:\/\//, '');
    // the advice (errors.ts) names uplink.* keys; another section's installer must read its own
    this.events =
      section === 'uplink'
        ? events
        : {
            ...events,
            failed: (e) => events.failed({ ...e, message: e.message.replace(/\buplink\./g, `${section}.`) }),
          };
  }

  start(): void {
    this.stopping = false;
    this.attempt();
  }

  /** Publishes `last` (retained, QoS 1) if connected, waits at most `graceMs` for it, then closes. */
  async stop(last?: Will, graceMs = 1000): Promise<void> {
    this.stopping = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const client = this.client;
    this.client = null;
    if (!client) return;
    if (last && this.connected) {
      await Promise.race([
        new Promise<void>((resolve) =>
          client.publish(last.topic, last.payload, { qos: 1, retain: true }, () => resolve()),
        ),
        new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref()),
      ]);
    }
    this.connected = false;
    // before CONNACK, mqtt.js's end(false) queues its DISCONNECT for a connection that has not come,
    // calls back at once and leaves the socket open: the broker would go on seeing a stopped gateway
    await new Promise<void>((resolve) => client.end(!client.connected, {}, () => resolve()));
  }

  private options(): IClientOptions {
    const c = this.cfg;
    const opts: IClientOptions = {
      protocolVersion: c.protocolVersion,
      clientId: c.clientId,
      clean: true,
      keepalive: c.keepaliveSeconds,
      reconnectPeriod: 0,
      connectTimeout: 30_000,
      will: { topic: this.will.topic, payload: Buffer.from(this.will.payload), qos: 1, retain: true },
      // nothing published while offline is kept by mqtt.js: the outbox does that
      queueQoSZero: false,
    };
    if (c.username !== undefined) opts.username = c.username;
    if (c.password !== undefined) opts.password = c.password;
    if (c.tls.ca) opts.ca = readFileSync(c.tls.ca);
    if (c.tls.cert) opts.cert = readFileSync(c.tls.cert);
    if (c.tls.key) opts.key = readFileSync(c.tls.key);
    if (c.url.startsWith('mqtts:') || c.url.startsWith('wss:')) opts.rejectUnauthorized = true;
    return opts;
  }

  private attempt(): void {
    this.retryTimer = null;
    if (this.stopping) return;
    let opts: IClientOptions;
    try {
      opts = this.options();
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      this.events.failed({
        code: 'TLS_FAILURE',
        message: `cannot read a certificate file of uplink.tls (${e.code ?? ''} ${e.path ?? e.message}): check the path and that the sitegw user may read it`,
      });
      this.scheduleRetry();
      return;
    }
    let client: MqttClient;
    try {
      // mqtts:// builds its TLS context right here and throws on a client certificate or key it
      // cannot decode, e.g. one replaced after loading (wss:// reports it as an 'error' event)
      client = mqtt.connect(this.cfg.url, opts);
    } catch (err) {
      this.events.failed(describeError(err, this.host, this.cfg.tls));
      this.scheduleRetry();
      return;
    }
    this.client = client;
    let failedHere = false;
    let wasConnected = false;
    client.on('connect', (connack) => {
      if (client !== this.client) return;
      wasConnected = true;
      this.connected = true;
      this.failures = 0;
      this.contain('connected', () => this.events.connected(client, connack));
    });
    client.on('message', (topic, payload, packet) => {
      if (client === this.client) this.contain('message', () => this.events.message(topic, payload, packet));
    });
    client.on('error', (err) => {
      if (client !== this.client || this.stopping) return;
      failedHere = true;
      this.contain('failed', () => this.events.failed(describeError(err, this.host, this.cfg.tls)));
    });
    client.on('disconnect', (packet) => {
      // MQTT 5: the broker says why it closes the connection
      if (client !== this.client || packet.reasonCode === undefined || packet.reasonCode === 0) return;
      failedHere = true;
      this.contain('failed', () =>
        this.events.failed(
          describeError(
            {
              code: packet.reasonCode!,
              message: packet.properties?.reasonString ?? `disconnect reason ${packet.reasonCode}`,
            },
            this.host,
          ),
        ),
      );
    });
    client.on('close', () => {
      if (client !== this.client) return;
      this.client = null;
      if (this.connected) {
        this.connected = false;
        this.contain('disconnected', () => this.events.disconnected());
      }
      client.end(true);
      if (this.stopping) return;
      if (!failedHere) {
        const e: Omit<UplinkError, 'at'> = wasConnected
          ? {
              code: 'CONNECTION_LOST',
              message: `the connection to ${this.host} was lost; the gateway reconnects by itself`,
            }
          : {
              code: 'TIMEOUT',
              message: `${this.host} did not answer the connection request: check uplink.url (host, port, scheme) and the network`,
            };
        this.contain('failed', () => this.events.failed(e));
      }
      this.scheduleRetry();
    });
  }

  /**
   * The handlers run inside mqtt.js's stream callbacks: a throw there would unwind through the
   * library and reach the process as an uncaught exception. Each call is contained here instead.
   */
  private contain(handler: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.events.faulted(handler, err);
    }
  }

  private scheduleRetry(): void {
    if (this.stopping) return;
    const wait = reconnectDelayMs(doubling(FIRST_RETRY_MS, this.cfg.reconnectMaxSeconds * 1000, this.failures));
    this.failures++;
    this.retryTimer = setTimeout(() => this.attempt(), wait);
    this.retryTimer.unref();
  }
}
