import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './api/http/app.js';
import { resolveTls, type TlsSetup } from './api/http/tls.js';
import { AuthService } from './auth/service.js';
import type { DeviceConfig, SiteConfig } from './config/types.js';
import { ScaledClock, type Clock } from './core/clock.js';
import { EventBus } from './core/events.js';
import { createLogger } from './core/log.js';
import type { RegisterReader } from './core/register-reader.js';
import { BusRegistry } from './modbus/buses.js';
import { Poller } from './poller/poller.js';
import { loadProfiles } from './profiles/index.js';
import { Site } from './site/site.js';
import { Bucketer } from './telemetry/bucketer.js';
import { CloseTimer } from './telemetry/close-timer.js';
import { VERSION } from './version.js';
import { GridFeature } from './grid/feature.js';
import { RefusalLog } from './api/refusals.js';
import { WsServer } from './api/ws/server.js';
import { wsAccess } from './api/http/ws-access.js';
import { OpsFeature } from './ops/feature.js';
import { openCheckedDatabase } from './ops/integrity.js';
import type { Uplink } from './uplink/feature.js';


export interface DaemonOptions {
  config: SiteConfig;
  clock?: Clock;
  log?: Logger;
  /** how devices are reached; defaults to one Modbus TCP bus per host:port */
  readerFor?: (device: DeviceConfig) => RegisterReader;
  /** runs after the store and bucketer are up and before live polling starts (history pre-fill) */
  beforePolling?: (ctx: DaemonContext) => Promise<void>;
  /** listen on config.http (default true); tests may use app.inject() instead */
  listen?: boolean;
  /** real time for token lifetimes (ms epoch); tests move it to expire codes and tokens */
  authNow?: () => number;
  /** WebSocket ping timeout, real ms (default 60 s, docs/design.md); tests shorten it */
  wsPingTimeoutMs?: number;
  /** how often open WebSockets' grants are checked again, real ms (default 5 s); tests shorten it */
  wsGrantRecheckMs?: number;
}

export interface DaemonContext {
  config: SiteConfig;
  clock: Clock;
  log: Logger;
  bus: EventBus;
  site: Site;
  db: Database;
  bucketer: Bucketer;
  poller: Poller;
  /** the token service: the HTTP guard uses it, and the WebSocket upgrade can (auth.check) */
  auth: AuthService;
  /** HTTPS certificate and fingerprint, or plain HTTP */
  tls: TlsSetup;
  /** health, metrics, status page data and systemd notifications (src/ops) */
  ops: OpsFeature;
}

/** How one started feature is undone; `what` names it in the log when undoing fails. */
interface Stopper {
  what: string;
  /** may return a promise (awaited) or any value (ignored: e.g. closeUntil's buckets) */
  stop: () => unknown;
}

/** Runs the stoppers last-first and empties the list; one that fails is logged and the rest still run. */
async function unwind(stoppers: Stopper[], log: Logger): Promise<unknown[]> {
  const failures: unknown[] = [];
  for (const { what, stop } of stoppers.splice(0).reverse()) {
    try {
      await stop();
    } catch (err) {
      failures.push(err);
      log.error({ err, feature: what }, `stopping ${what} failed; the other features still stop`);
    }
  }
  return failures;
}

/**
 * The composition root: wires features that each start and stop, and owns nothing else.
 * Order on start: store → bucketer → auth → ops → grid → uplink → homeassistant → (pre-fill) → poller → bucket
 * closing → HTTP → WebSocket → listen. Each started feature pushes its stopper, and both stop()
 * and a failed start run that one list backwards, so the store closes last.
 */
export class Daemon {
  private constructor(
    readonly ctx: DaemonContext,
    readonly app: FastifyInstance,
    private readonly stoppers: Stopper[],
    readonly ws: WsServer,
    /** the MQTT uplink, null without `uplink:` in site.yaml; health() is its state for probes */
    readonly uplink: Uplink | null,
  ) {}

  get site(): Site {
    return this.ctx.site;
  }

  get url(): string {
    const addr = this.app.server.address();
    if (!addr || typeof addr === 'string') return '';
    const scheme = this.ctx.tls.https ? 'https' : 'http';
    return `${scheme}://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
  }

  static async start(opts: DaemonOptions): Promise<Daemon> {
    const log = opts.log ?? createLogger();
    const stoppers: Stopper[] = [];
    try {
      return await Daemon.compose(opts, log, stoppers);
    } catch (err) {
      // undo exactly what had started (a taken HTTP port is the usual cause), so nothing keeps the
      // store open, polls or stays connected; the caller hears the original error, not an undo's
      if (stoppers.length > 0) log.warn({ reason: String(err) }, 'start failed: stopping the features already started');
      await unwind(stoppers, log);
      throw err;
    }
  }

  /** Starts the features in order; each one that started pushes its stopper onto `stoppers`. */
  private static async compose(opts: DaemonOptions, log: Logger, stoppers: Stopper[]): Promise<Daemon> {
    const started = (what: string, stop: Stopper['stop']): void => void stoppers.push({ what, stop });
    const { config } = opts;
    // before anything is opened: a broken device profile stops the start with its file and line
    const profiles = loadProfiles();
    const clock = opts.clock ?? new ScaledClock(1);
    // HTTPS off loopback (a certificate problem stops the start before anything is opened)
    const tls = resolveTls(config, log.child({ feature: 'tls' }));
    const bus = new EventBus();
    // a damaged database is moved aside and replaced (src/ops/integrity.ts), never a crash loop
    const dbFile = join(config.dataDir, 'sitegw.db');
    const { db, replaced } = openCheckedDatabase(dbFile, log.child({ feature: 'store' }));
    started('store', () => db.close());
    const site = new Site(config);
    const pollPeriodMs = config.poll.intervalSeconds * 1000;
    const bucketer = new Bucketer({ db, streams: site.streams(), pollPeriodMs, bus });
    bucketer.start();
    // saves the energy counts and the open buckets' sums, so the next start continues them
    started('bucketer', () => bucketer.stop());

    const buses = new BusRegistry();
    const readerFor = opts.readerFor ?? ((d: DeviceConfig): RegisterReader => buses.readerFor(d));
    const poller = new Poller({ site, bus, clock, readerFor, log, profiles });
    const auth = new AuthService({ db, config: config.auth, dataDir: config.dataDir, siteId: site.id, log: log.child({ feature: 'auth' }), now: opts.authNow });
    auth.start();
    started('auth', () => auth.stop());
    let ws: WsServer | undefined;
    const ops = new OpsFeature({ site, db, dbFile, bus, clock, log, version: VERSION, bucketer, scheduler: poller, ws: () => ws, replaced });
    ops.start();
    started('ops', () => ops.stop());
    const ctx: DaemonContext = { config, clock, log, bus, site, db, bucketer, poller, auth, tls, ops };

    const unsubscribe = [
      bus.on('reading', (r) => bucketer.ingest(r)),
      bus.on('streamsChanged', () => bucketer.setStreams(site.streams())),
    ];
    started('bucketer feed', () => unsubscribe.forEach((off) => off()));
    const grid = new GridFeature({ site, db, bus, log: log.child({ feature: 'grid' }), debounce: config.grid.debounce });
    grid.start();
    started('grid', () => grid.stop());
    // before the pre-fill and the poller, so every bucket they close goes into the outbox
    const uplink = config.uplink
      ? // loaded only when configured: mqtt alone is ~20 MB of resident memory (README Performance)
        new (await import('./uplink/feature.js')).Uplink({ config: config.uplink, db, site, bus, clock, log: log.child({ feature: 'uplink' }), bucketer, onGridRecord: (h) => grid.onRecord(h), socScale: config.api.socScale, version: VERSION })
      : null;
    uplink?.start();
    if (uplink) {
      started('uplink', () => uplink.stop());
      ops.setUplink(() => {
        const h = uplink.health();
        return { connected: h.connected, outboxDepth: h.outbox.depth, lastError: h.lastError?.message ?? null };
      });
    }
    // Home Assistant discovery: its own broker and connection, with or without an uplink
    const homeassistant = config.homeassistant
      ? new (await import('./homeassistant/feature.js')).HomeAssistant({ config: config.homeassistant, site, bus, log: log.child({ feature: 'homeassistant' }), streamsNow: () => ops.streamsNow(), version: VERSION, registry: ops.metrics.registry })
      : null;
    if (homeassistant) {
      homeassistant.start();
      started('homeassistant', () => homeassistant.stop());
    }
    // buckets that ended before the stop are complete: written after the poller's last reading and
    // while the uplink still listens (its outbox keeps them for the next start)
    started('bucket flush', () => bucketer.closeUntil(clock.now()));
    if (opts.beforePolling) await opts.beforePolling(ctx);

    poller.start();
    started('poller', async () => {
      await poller.stop();
      await buses.close();
    });
    const closeTimer = new CloseTimer(clock, Math.min(pollPeriodMs * 1.5, 60_000), (boundary) => {
      try {
        bucketer.closeUntil(boundary);
        ops.health.noteWrite();
      } catch (err) {
        ops.health.noteWrite(err);
        log.error({ err }, 'closing buckets failed; they stay open and are retried at the next boundary');
      }
    });
    closeTimer.start();
    started('bucket closing', () => closeTimer.stop());

    // one bound for the HTTP and WebSocket refusals: a host alternating between them meets one budget
    const refusals = new RefusalLog(log.child({ feature: 'http' }));
    const app = await buildApp({
      site,
      refusals,
      db,
      auth,
      https: tls.https,
      limits: config.limits.http,
      tariffQuota: config.limits.dynamicTariffs,
      now: () => clock.now(),
      logger: log.child({ feature: 'http' }),
      version: VERSION,
      ops,
    });
    started('http', () => app.close());
    ws = new WsServer(app.server, bus, wsAccess(auth), {
      log: log.child({ feature: 'ws' }),
      stream: (id) => site.stream(id),
      maxEntriesPerMessage: config.ws.maxEntriesPerMessage,
      socScale: config.api.socScale,
      pingTimeoutMs: opts.wsPingTimeoutMs,
      grantRecheckMs: opts.wsGrantRecheckMs,
      refusals,
    });
    ws.start();
    // WebSocket clients hear 1001 (going away) before the HTTP server closes under them
    started('websocket', () => ws?.stop());
    if (opts.listen !== false) await app.listen({ host: config.http.host, port: config.http.port });
    const daemon = new Daemon(ctx, app, stoppers, ws, uplink);
    ops.ready();
    log.info({ site: site.id, devices: config.devices.length, url: daemon.url, fingerprint: tls.fingerprint, version: VERSION }, 'sitegw started');
    return daemon;
  }

  /** Stops what start() started, last-first; every feature gets its stop even when one fails. */
  async stop(): Promise<void> {
    if (this.stoppers.length === 0) return; // stopped already
    this.ctx.ops.stopping();
    const failures = await unwind(this.stoppers, this.ctx.log);
    if (failures.length > 0) throw failures[0];
    this.ctx.log.info('sitegw stopped');
  }
}
