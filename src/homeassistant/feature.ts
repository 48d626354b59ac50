import type { IPublishPacket, MqttClient } from 'mqtt';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { HomeAssistantConfig } from '../config/types.js';
import type { Control } from '../control/control.js';
import type { EventBus } from '../core/events.js';
import type { Feature, FeatureHealth } from '../core/feature.js';
import type { StreamDef } from '../core/streams.js';
import type { Site } from '../site/site.js';
import type { StreamNow } from '../telemetry/now.js';
import { safeUrl, type UplinkError } from '../uplink/errors.js';
import { MqttLink } from '../uplink/link.js';
import {
  type DiscoveryContext,
  discoveryConfigs,
  gatewayIdentifier,
  haEntities,
  isOwnStream,
  statePayload,
  type Topics,
  topicsOf,
} from './discovery.js';
import {
  answerExportLimitCommand,
  type HaLimits,
  type LimitTopics,
  limitStates,
  limitsDiscovery,
  limitTopicsOf,
} from './limits.js';
import { answerModeCommand, answerReserveCommand, haStorages } from './mode-command.js';

export interface HomeAssistantDeps {
  config: HomeAssistantConfig;
  site: Site;
  bus: EventBus;
  log: Logger;
  /** every stream's live values, the same function /metrics reads (OpsFeature.streamsNow) */
  streamsNow: () => { def: StreamDef; now: StreamNow }[];
  version: string;
  /** the daemon's metrics registry: the connection state goes there while the feature runs */
  registry?: Registry;
  /** battery control, for the operation mode select (built before this feature, started after it) */
  control?: Control;
  /** the site limits, for the export limit number and the curtailed power sensor (limits.ts) */
  limits?: HaLimits;
}

export interface HomeAssistantHealth {
  broker: string;
  connected: boolean;
  /** retained discovery configs this gateway keeps on the broker */
  entities: number;
  lastError: { code: string; message: string } | null;
}

const RETAINED = { qos: 1, retain: true } as const;
const CONNECTED_METRIC = 'sitegw_homeassistant_connected';

/**
 * Home Assistant MQTT discovery, a feature of its own beside the uplink (its own broker and
 * connection: a site can have either, both or neither). On connecting it publishes the
 * retained discovery configs, the gateway's availability (`online`; its MQTT last will says
 * `offline`) and each device's, then every `stateIntervalSeconds` the live states, retained so
 * Home Assistant has them at once after its own restart. Configs are compared with what was
 * published: a device learned later (identity, PV modules) updates its configs, and configs of
 * this gateway found on the broker that site.yaml no longer has are removed.
 */
export class HomeAssistant implements Feature {
  readonly name = 'homeassistant';
  private readonly ctx: DiscoveryContext;
  private readonly topics: Topics;
  private readonly limitTopics: LimitTopics;
  private link: MqttLink | null = null;
  private client: MqttClient | null = null;
  private stateTimer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void)[] = [];
  /** topic → config payload the broker has from us in this connection */
  private published = new Map<string, string>();
  private lastError: Omit<UplinkError, 'at'> | null = null;
  /** storage system → the operation mode the broker has from us in this connection */
  private modesSent = new Map<string, string>();
  /** storage system → the reserve the broker has from us in this connection */
  private reservesSent = new Map<string, string>();
  /** real ms of the last full announcement */
  private announcedAt = -Infinity;

  constructor(private readonly deps: HomeAssistantDeps) {
    const { config, site, version } = deps;
    this.topics = topicsOf(config.discoveryPrefix, config.stateTopicPrefix, gatewayIdentifier(site.id));
    this.limitTopics = limitTopicsOf(config.stateTopicPrefix);
    this.ctx = {
      siteId: site.id,
      siteName: site.config.site.name ?? site.id,
      version,
      discoveryPrefix: config.discoveryPrefix,
      topics: this.topics,
    };
  }

  start(): void {
    const { bus, config, log } = this.deps;
    this.unsubscribe = [
      bus.on('deviceHealth', (h) => this.publish(this.topics.device(h.deviceId), h.online ? 'online' : 'offline')),
      bus.on('streamsChanged', () => this.syncDiscovery()),
    ];
    this.link = new MqttLink(
      config,
      { topic: this.topics.status, payload: 'offline' },
      {
        connected: (client) => this.onConnected(client),
        disconnected: () => this.onDisconnected(),
        message: (topic, payload, packet) => this.onMessage(topic, payload, packet),
        failed: (e) => this.fail(e),
        faulted: (handler, err) =>
          log.error({ err, handler }, 'homeassistant: handling an MQTT event failed; the connection goes on'),
      },
      'homeassistant',
    );
    this.link.start();
    if (this.deps.registry) {
      const self = this;
      new Gauge({
        name: CONNECTED_METRIC,
        help: '1 while the Home Assistant MQTT connection is up',
        registers: [this.deps.registry],
        collect() {
          this.set(self.link?.connected ? 1 : 0);
        },
      });
    }
    log.info(
      {
        broker: safeUrl(config.url),
        discoveryPrefix: config.discoveryPrefix,
        stateTopicPrefix: config.stateTopicPrefix,
      },
      'homeassistant discovery started',
    );
  }

  async stop(): Promise<void> {
    for (const u of this.unsubscribe.splice(0)) u();
    this.deps.registry?.removeSingleMetric(CONNECTED_METRIC);
    this.stopTimer();
    // a clean stop says so itself; the will covers a crash or a lost connection
    await this.link?.stop({ topic: this.topics.status, payload: 'offline' });
    this.link = null;
    this.client = null;
  }

  /**
   * Its problems stay off /healthz: Home Assistant shows the gateway's entities unavailable itself
   * (the availability topic and its last will), and /healthz tells what the gateway must fix.
   */
  health(): HomeAssistantHealth & FeatureHealth {
    return {
      problems: [],
      broker: safeUrl(this.deps.config.url),
      connected: this.link?.connected ?? false,
      entities: this.published.size,
      lastError: this.lastError,
    };
  }

  private onConnected(client: MqttClient): void {
    this.client = client;
    this.lastError = null;
    this.published.clear();
    this.modesSent.clear();
    this.reservesSent.clear();
    this.deps.log.info({ broker: safeUrl(this.deps.config.url) }, 'homeassistant connected');
    // the commands with Retain As Published (MQTT 5): one published with the retain flag while the
    // gateway is connected keeps it on delivery and is refused like a retained copy (mode-command.ts)
    const command = { qos: 1, rap: true } as const;
    const subs = {
      [this.topics.ownConfigs]: { qos: 1 },
      [this.topics.birth]: { qos: 1 },
      [this.topics.modeCommands]: command,
      [this.topics.reserveCommands]: command,
      ...(this.deps.limits ? { [this.limitTopics.exportLimitCommand]: command } : {}),
    } as const;
    client.subscribe(subs, (err) => {
      if (err)
        this.fail({
          code: 'NOT_AUTHORIZED',
          message: `the broker refused the subscription to ${this.topics.ownConfigs}: configs of removed devices stay until it is allowed (${err.message})`,
        });
    });
    this.announce();
    this.stopTimer();
    this.stateTimer = setInterval(() => this.publishStates(), this.deps.config.stateIntervalSeconds * 1000);
    this.stateTimer.unref();
  }

  private onDisconnected(): void {
    this.client = null;
    this.stopTimer();
    this.deps.log.info('homeassistant disconnected; states resume on reconnecting');
  }

  /** Everything Home Assistant needs from scratch: configs, availability, states. */
  private announce(): void {
    this.announcedAt = performance.now();
    this.syncDiscovery();
    this.publish(this.topics.status, 'online');
    for (const d of this.deps.site.devices.values())
      this.publish(this.topics.device(d.config.id), d.online ? 'online' : 'offline');
    this.publishStates();
  }

  private stopTimer(): void {
    if (this.stateTimer) clearInterval(this.stateTimer);
    this.stateTimer = null;
  }

  /** Publishes the configs that are new or changed, and removes ours that the site no longer has. */
  private syncDiscovery(): void {
    if (!this.client) return;
    const want = this.wanted();
    for (const [topic, body] of want) {
      if (this.published.get(topic) === body) continue;
      this.published.set(topic, body);
      this.publish(topic, body);
    }
    for (const [topic, body] of [...this.published]) {
      if (want.has(topic)) continue;
      this.published.delete(topic);
      this.remove(topic, body);
    }
  }

  private wanted(): Map<string, string> {
    const { site } = this.deps;
    const out = discoveryConfigs(this.ctx, site.devices.values(), site.streams(), haStorages(this.deps.control));
    if (this.deps.limits) for (const [t, body] of limitsDiscovery(this.ctx, this.limitTopics)) out.set(t, body);
    return out;
  }

  /**
   * An empty retained payload deletes the entity in Home Assistant and the retained config at the
   * broker; the entity's retained state goes too, and the retained availability of a device
   * site.yaml no longer has, so nothing of it is left on the broker.
   */
  private remove(topic: string, config: string): void {
    this.publish(topic, '');
    let parsed: { state_topic?: unknown; availability?: unknown };
    try {
      parsed = JSON.parse(config) as typeof parsed;
    } catch {
      return;
    }
    const prefix = this.deps.config.stateTopicPrefix;
    const stateTopic = parsed.state_topic;
    // the states of our entities: a stream's, or a storage system's operation mode or reserve
    if (
      typeof stateTopic === 'string' &&
      (stateTopic.startsWith(`${prefix}/streams/`) ||
        (stateTopic.startsWith(`${prefix}/`) && /\/(operation_mode|reserve_soc)$/.test(stateTopic)))
    )
      this.publish(stateTopic, '');
    if (!Array.isArray(parsed.availability)) return;
    // a device's availability topic that no configured device has: that device was removed
    const kept = new Set([...this.deps.site.devices.keys()].map((id) => this.topics.device(id)));
    for (const a of parsed.availability as { topic?: unknown }[]) {
      const t = a?.topic;
      if (typeof t === 'string' && t.startsWith(`${prefix}/devices/`) && !kept.has(t)) this.publish(t, '');
    }
  }

  private publishStates(): void {
    if (!this.client) return;
    try {
      // a device learned since (identity, PV modules) gets its configs before its states
      this.syncDiscovery();
      const devices = this.deps.site.devices;
      for (const { def, now } of this.deps.streamsNow()) {
        const d = devices.get(def.deviceId);
        if (!d) continue;
        for (const e of haEntities(def, isOwnStream(def, d))) {
          const body = statePayload(e, now.values[e.q.key]);
          if (body !== undefined) this.publish(this.topics.state(def.id, e.key), body);
        }
      }
      // a mode or reserve changed by the API, a plan or the status page reaches the entities within an interval
      for (const { device } of haStorages(this.deps.control)) {
        this.publishMode(device.config.id, false);
        this.publishReserve(device.config.id, false);
      }
      this.publishLimits();
    } catch (err) {
      // runs on a timer: a fault here must not reach the process
      this.deps.log.error({ err }, 'homeassistant: publishing the states failed; retried at the next interval');
    }
  }

  private onMessage(topic: string, payload: Buffer, packet: IPublishPacket): void {
    if (topic === this.topics.birth) {
      // Home Assistant (re)started: it asks integrations to announce themselves again. Anyone who
      // may publish on the broker can send this: at most one announcement per state interval
      // (the configs are retained anyway, so Home Assistant has them either way)
      if (
        payload.toString() === 'online' &&
        performance.now() - this.announcedAt >= this.deps.config.stateIntervalSeconds * 1000
      ) {
        this.published.clear();
        this.modesSent.clear();
        this.reservesSent.clear();
        this.announce();
      }
      return;
    }
    if (topic.startsWith(`${this.deps.config.stateTopicPrefix}/devices/`) && topic.endsWith('/operation_mode/set')) {
      const a = answerModeCommand(this.deps.control, this.topics, topic, payload, packet.retain);
      if (!a.ok) this.deps.log.warn({ topic, code: a.code }, `homeassistant: operation mode refused: ${a.message}`);
      // after a refusal too: the select shows the mode in force, not the one refused
      if (a.device) this.publishMode(a.device.config.id, true);
      return;
    }
    if (topic.startsWith(`${this.deps.config.stateTopicPrefix}/devices/`) && topic.endsWith('/reserve_soc/set')) {
      const a = answerReserveCommand(this.deps.control, this.topics, topic, payload, packet.retain);
      if (!a.ok) this.deps.log.warn({ topic, code: a.code }, `homeassistant: reserve refused: ${a.message}`);
      // after a refusal too: the number shows the reserve in force, not the one refused
      if (a.device) this.publishReserve(a.device.config.id, true);
      return;
    }
    if (topic === this.limitTopics.exportLimitCommand && this.deps.limits) {
      const a = answerExportLimitCommand(this.deps.limits, payload, packet.retain);
      if (!a.ok) this.deps.log.warn({ topic, code: a.code }, `homeassistant: export limit refused: ${a.message}`);
      else this.deps.log.info({ exportW: a.exportW }, 'homeassistant: export limit written to the limit schedule');
      // after a refusal too: the number shows the limit in force, not the one refused
      this.publishLimits();
      return;
    }
    // a retained config of ours from an earlier run: removed when the site no longer has it
    if (packet.retain && payload.length > 0 && !this.published.has(topic) && !this.wanted().has(topic)) {
      this.deps.log.info(
        { topic },
        'homeassistant: removing the discovery config of an entity site.yaml no longer has',
      );
      this.remove(topic, payload.toString());
    }
  }

  /** A storage system's mode in force: when it changed since the last one sent, or `always` (a command's answer). */
  private publishMode(deviceId: string, always: boolean): void {
    const mode = this.deps.control?.modeOf(deviceId);
    if (mode === undefined || (!always && this.modesSent.get(deviceId) === mode)) return;
    this.modesSent.set(deviceId, mode);
    this.publish(this.topics.mode(deviceId), mode);
  }

  /** A storage system's reserve in force, as publishMode does the mode. */
  private publishReserve(deviceId: string, always: boolean): void {
    const reserve = this.deps.control?.reserveOf(deviceId);
    if (reserve === undefined) return;
    const body = String(reserve);
    if (!always && this.reservesSent.get(deviceId) === body) return;
    this.reservesSent.set(deviceId, body);
    this.publish(this.topics.reserve(deviceId), body);
  }

  /** The export limit in force and the curtailed power (retained, as every state). */
  private publishLimits(): void {
    const s = this.deps.limits?.status();
    if (!s) return;
    for (const [topic, body] of limitStates(s, this.limitTopics)) this.publish(topic, body);
  }

  private publish(topic: string, body: string): void {
    this.client?.publish(topic, body, RETAINED, (err) => {
      if (err)
        this.fail({
          code: 'PUBLISH_REFUSED',
          message: `the broker refused a message on ${topic} (${err.message}): allow this gateway to publish below ${this.deps.config.discoveryPrefix}/ and ${this.deps.config.stateTopicPrefix}/`,
        });
    });
  }

  private fail(e: Omit<UplinkError, 'at'>): void {
    const before = this.lastError;
    this.lastError = e;
    // once per kind of failure in a row, not once per retry
    if (before?.code !== e.code || before.message !== e.message)
      this.deps.log.warn({ code: e.code }, `homeassistant: ${e.message}`);
  }
}
