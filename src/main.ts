import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './api/http/app.js';
import type { SetupHandle } from './api/http/setup.js';
import type { SessionStore } from './api/http/status-session.js';
import { resolveTls, type TlsSetup } from './api/http/tls.js';
import { wsAccess } from './api/http/ws-access.js';
import { RefusalLog } from './api/refusals.js';
import { WsServer } from './api/ws/server.js';
import { AuthService } from './auth/service.js';
import type { DeviceConfig, SiteConfig } from './config/types.js';
import { Control } from './control/control.js';
import { type Clock, ScaledClock } from './core/clock.js';
import { EventBus } from './core/events.js';
import { type Feature, FeatureList } from './core/feature.js';
import { createLogger } from './core/log.js';
import type { RegisterReader } from './core/register-reader.js';
import { StartAfter } from './core/start-after.js';
import { TimeLabels, type TimeLabelsOptions } from './core/time-labels.js';
import { GridFeature } from './grid/feature.js';
import type { GridOperatorStatus } from './gridop/client.js';
import { SiteLimitsFeature } from './limits/feature.js';
import { BusRegistry } from './modbus/buses.js';
import { ScheduledBackup } from './ops/backup-schedule.js';
import { ClockAnchor } from './ops/clock-anchor.js';
import { OpsFeature } from './ops/feature.js';
import { openCheckedDatabase } from './ops/integrity.js';
import { siteDerReport, siteMirrorValues } from './ops/operator-report.js';
import { KernelTimeSync, TIMESYNCD_FLAG } from './ops/time-sync.js';
import { OptimiserLoop } from './optimiser/loop.js';
import { Poller } from './poller/poller.js';
import { profilesFor } from './profiles/index.js';
import { activePowerLimitFor } from './profiles/power-limits.js';
import { storageControlFor } from './profiles/storage-controls.js';
import { LearnedTopology, restoreLearned } from './site/learned.js';
import { Site } from './site/site.js';
import { energyKeepFile } from './store/energy-keep.js';
import { Bucketer } from './telemetry/bucketer.js';
import { BucketClosing, BucketFeed, BucketFlush } from './telemetry/feature.js';
import { Retention } from './telemetry/retention.js';
import type { Uplink } from './uplink/feature.js';
import { TOPIC } from './uplink/topics.js';
import { BUILT_AT, VERSION } from './version.js';

export interface DaemonOptions {
  config: SiteConfig;
  clock?: Clock;
  log?: Logger;
  /** how devices are reached; defaults to one Modbus TCP bus per host:port */
  readerFor?: (device: DeviceConfig) => RegisterReader;
  /**
   * runs after the store and bucketer are up and before live polling starts (history pre-fill);
   * `stop` is aborted when the daemon stops during it (then it ends where it is)
   */
  beforePolling?: (ctx: DaemonContext, stop: AbortSignal) => Promise<void>;
  /**
   * beforePolling runs in the background (src/core/start-after.ts): start() returns with the API
   * answering what it has filled so far; the features that hear readings or close buckets
   * (control, the optimiser, limits, the poller, bucket closing, retention) start when it ends.
   * It begins when this settles (the demo: once its banner is out)
   */
  fillInBackground?: Promise<void>;
  /** listen on config.http (default true); tests may use app.inject() instead */
  listen?: boolean;
  /** real time for token lifetimes (ms epoch); tests move it to expire codes and tokens */
  authNow?: () => number;
  /**
   * the earliest wall-clock time that can be right: by default the build date on the daemon's own
   * clock (`sitegw run`), and none on a clock handed in (a simulated calendar)
   */
  clockNotBefore?: number;
  /** WebSocket ping timeout, real ms (default 60 s, docs/design.md); tests shorten it */
  wsPingTimeoutMs?: number;
  /** how often open WebSockets' grants are checked again, real ms (default 5 s); tests shorten it */
  wsGrantRecheckMs?: number;
  /** real ms after the start before the scheduled backups are first looked at (default a minute) */
  backupFirstLookMs?: number;
  /**
   * the site.yaml this config was read from and how to restart with it changed: the owner's
   * setup page (src/api/http/setup.ts) edits it; without it (the demo, tests) the page says it cannot
   */
  setup?: SetupHandle;
  /** the owner's sessions, kept by `sitegw run` across its restarts so the setup page stays signed in */
  ownerSessions?: SessionStore;
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

/**
 * The composition root: builds the features and starts them in this order, each with its
 * dependencies in its constructor (or the bus): store → bucketer → auth → ops → bucketer feed →
 * grid → uplink → homeassistant → bucket flush → (pre-fill) → modbus → control → optimiser → limits → gridop → poller →
 * modbus proxy → bucket closing →
 * HTTP → WebSocket → listen. stop() and a failed start both stop the started ones in reverse, so
 * the store closes last.
 */
export class Daemon {
  private constructor(
    readonly ctx: DaemonContext,
    readonly app: FastifyInstance,
    private readonly features: FeatureList,
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
    const features = new FeatureList(log);
    try {
      return await Daemon.compose(opts, log, features);
    } catch (err) {
      // undo exactly what had started (a taken HTTP port is the usual cause), so nothing keeps the
      // store open, polls or stays connected; the caller hears the original error, not an undo's
      if (features.size > 0) log.warn({ reason: String(err) }, 'start failed: stopping the features already started');
      await features.stop();
      throw err;
    }
  }

  /** Builds and starts the features in order; each one started is in `features`. */
  private static async compose(opts: DaemonOptions, log: Logger, features: FeatureList): Promise<Daemon> {
    const { config } = opts;
    // before anything is opened: a broken device profile stops the start with its file and line
    const profiles = profilesFor(config.devices);
    const clock = opts.clock ?? new ScaledClock(1);
    // HTTPS off loopback (a certificate problem stops the start before anything is opened)
    const tls = resolveTls(config, log.child({ feature: 'tls' }));
    const bus = new EventBus(log);
    // a damaged database is moved aside and replaced (src/ops/integrity.ts), never a crash loop
    const dbFile = join(config.dataDir, 'sitegw.db');
    // none yet: an earlier database's counts kept in memory at this path are not this one's (bucketer)
    const newDatabase = !existsSync(dbFile);
    // an earlier database lived here (its counts are still kept in memory) and the folder has none
    // now: wiped, or an empty folder restored; said in health, since what went with it is not back
    const startedEmpty = newDatabase && existsSync(energyKeepFile(config.dataDir));
    const { db, replaced, exclusive, readOnly, cleanup, credentialsLost } = openCheckedDatabase(
      dbFile,
      log.child({ feature: 'store' }),
    );
    await features.start({
      name: 'store',
      start: () => undefined,
      stop: () => {
        db.close();
        cleanup?.();
      },
    });
    const site = new Site(config);
    // PV modules learned by earlier runs: the streams exist before the first poll
    restoreLearned(db, site);
    const pollPeriodMs = config.poll.intervalSeconds * 1000;
    const bucketer = await features.start(
      new Bucketer({
        db,
        streams: site.streams(),
        pollPeriodMs,
        bus: bus.as('bucketer'),
        // the life's energy counts kept in memory every 10 s of readings: a kill loses no more (finding 5)
        liveStateFile: energyKeepFile(config.dataDir),
        newDatabase,
      }),
    );

    const buses = new BusRegistry();
    const readerFor = opts.readerFor ?? ((d: DeviceConfig): RegisterReader => buses.readerFor(d));
    // a clock handed in (the demo, tests, benches) may run a simulated calendar: any date of it is right
    const notBefore = opts.clockNotBefore ?? (opts.clock ? Number.NEGATIVE_INFINITY : BUILT_AT);
    // the kernel's NTP state (a first synchronisation is trusted at once); the flag file is the
    // test hooks' to move (src/ops/test-hooks.ts)
    const timeSync = await features.start(
      new KernelTimeSync(hooksOn() ? (process.env.SITEGW_TIMESYNC_FLAG ?? TIMESYNCD_FLAG) : TIMESYNCD_FLAG),
    );
    let feed: BucketFeed | undefined;
    const hooks = hooksOn();
    const labels = timeLabels(clock, bucketer, log.child({ feature: 'clock' }), notBefore, {
      // a restart inside a forward glitch holds it too (the last run's line, same boot); a clock
      // handed in (demo, tests) runs its own calendar
      ...(opts.clock ? {} : anchored(new ClockAnchor(join(config.dataDir, 'clock-anchor')))),
      // the fault harness shortens the wait for a forward step (test/e2e/clock-invariants.test.ts)
      confirmMs: hooks && process.env.SITEGW_CLOCK_CONFIRM_MS ? Number(process.env.SITEGW_CLOCK_CONFIRM_MS) : undefined,
      // a clock handed in (demo, tests) is its own truth: the host's NTP says nothing about it
      synchronised: opts.clock ? undefined : () => timeSync.synchronised(),
      onHeld: (o) => feed?.settle(o),
    });
    const poller = new Poller({ site, bus: bus.as('poller'), clock, readerFor, log, profiles, labels });
    const auth = await features.start(
      new AuthService({
        db,
        config: config.auth,
        dataDir: config.dataDir,
        siteId: site.id,
        log: log.child({ feature: 'auth' }),
        now: opts.authNow,
        // a token write the disk refused shows in health (ops is built next)
        storageFault: (err) => ops.health.noteWrite(err),
        devicesBehind: (id) => site.batteriesOf(id).map((b) => b.config.id),
      }),
    );
    const ops = new OpsFeature({
      site,
      db,
      dbFile,
      bus: bus.as('ops'),
      clock,
      log,
      version: VERSION,
      bucketer,
      scheduler: poller,
      timeLabels: labels,
      features,
      storageCheckMs: Math.min(pollPeriodMs / clock.speed, 60_000),
      unsaved: { pending: () => auth.unsavedTokens > 0, save: () => auth.saveUnsavedTokens() },
      replaced,
      exclusive,
      readOnly,
      credentialsLost,
    });
    // its `health` is the daemon's Health (the HTTP routes use it), so it joins the list by its start and stop
    await features.start({ name: 'ops', start: () => ops.start(), stop: () => ops.stop() });
    if (startedEmpty) {
      const sentence = `started with an empty data folder (${config.dataDir}) where a database lived before: a new one was made; its history, API clients and the owner's password are gone (sitegw restore puts a backup back; otherwise sitegw clients add and sitegw owner set-password make them anew)`;
      log.warn({ dataDir: config.dataDir }, sentence);
      ops.health.noteAtStart(sentence);
    }
    // the copies a damaged database is filled from at the next start (ops/backup-schedule.ts)
    await features.start(
      new ScheduledBackup({ dbFile, log: log.child({ feature: 'backups' }), firstLookMs: opts.backupFirstLookMs }),
    );
    const registry = ops.metrics.registry;
    // built here and started below, beside the buses: Home Assistant's discovery offers its select
    // from its first connection (a select missing for a moment would make Home Assistant drop it)
    const control = new Control({
      config: config.control,
      site,
      db,
      clock,
      bus: bus.as('control'),
      log: log.child({ feature: 'control' }),
      busFor: (d) => buses.readerFor(d.config),
      controlFor: (d, b) =>
        storageControlFor(
          d.config,
          b,
          config.control.revertSeconds,
          profiles,
          site.batteriesOf(d.config.id).map((x) => x.config),
        ),
      registry,
      // a keep-alive at a third of the command's life needs a decision at least that often
      tickMs: Math.min(pollPeriodMs, config.control.revertSeconds * 250),
      // the site's limits in force clip every command too: a charge is shed first for an import limit
      siteLimits: () => limitsRef?.gridLimits() ?? {},
    });
    let limitsRef: SiteLimitsFeature | undefined;
    let gridopRef: { status(): GridOperatorStatus } | undefined;
    // the uplink starts before control (so no bucket misses the outbox) and hands it cloud plans
    let controlRef: Control | undefined;
    const ctx: DaemonContext = { config, clock, log, bus, site, db, bucketer, poller, auth, tls, ops };

    feed = await features.start(new BucketFeed({ bus: bus.as('bucketer feed'), bucketer, site, log, labels }));
    await features.start(new LearnedTopology({ db, site, bus: bus.as('learned topology'), log }));
    const { debounce } = config.grid;
    await features.start(
      new GridFeature({
        site,
        db,
        bus: bus.as('grid'),
        log: log.child({ feature: 'grid' }),
        debounce,
        writes: ops.health,
        labels,
      }),
    );
    // before the pre-fill and the poller, so every bucket they close goes into the outbox
    const uplink = config.uplink
      ? // loaded only when configured: about 5 MB less resident memory without it (bench/README.md "Footprint")
        await features.start(
          new (await import('./uplink/feature.js')).Uplink({
            config: config.uplink,
            db,
            site,
            bus: bus.as('uplink'),
            clock,
            log: log.child({ feature: 'uplink' }),
            socScale: config.api.socScale,
            version: VERSION,
            registry,
            // beside the database, so a damaged one replaced at boot still continues the seqs
            seqFile: join(config.dataDir, 'uplink-seq'),
            clockPlausible: () => labels.plausible(),
            // state messages are labelled as readings are: nothing before the build, never a held step's time
            labelTime: () => (labels.plausible() ? labels.closingNow() : null),
            control: () => controlRef,
            limits: () => limitsRef,
            gridOperator: () => gridopRef,
          }),
        )
      : null;
    // Home Assistant discovery: its own broker and connection, with or without an uplink
    if (config.homeassistant) {
      const { HomeAssistant } = await import('./homeassistant/feature.js');
      await features.start(
        new HomeAssistant({
          config: config.homeassistant,
          site,
          bus: bus.as('homeassistant'),
          log: log.child({ feature: 'homeassistant' }),
          streamsNow: () => ops.streamsNow(),
          version: VERSION,
          registry,
          control,
          limits: { status: () => limitsRef?.status(), db, now: () => clock.now() },
        }),
      );
    }
    await features.start(new BucketFlush({ bucketer, clock, labels }));
    const { beforePolling } = opts;
    const fill = beforePolling
      ? (stop: AbortSignal) => (uplink ? uplink.whileFilling(() => beforePolling(ctx, stop)) : beforePolling(ctx, stop))
      : undefined;
    const background =
      fill && opts.fillInBackground ? new StartAfter('history fill', fill, log, opts.fillInBackground) : undefined;
    if (background) await features.start(background);
    else if (fill) await fill(new AbortController().signal);
    // what hears readings or closes buckets waits for a fill in the background (src/core/start-after.ts)
    const later = (f: Feature): Feature => background?.defer(f) ?? f;

    await features.start({ name: 'modbus', start: () => undefined, stop: () => buses.close() });
    // before the poller: a start restores the current slot or self-consumption first, and a stop
    // writes self-consumption while the buses are still open
    await features.start(later(control));
    controlRef = control;
    // after control (it writes plans through it), before the poller: the first SoC reading is heard
    await features.start(
      later(
        new OptimiserLoop({
          config,
          site,
          db,
          clock,
          bus: bus.as('optimiser'),
          log: log.child({ feature: 'optimiser' }),
          control,
          // started after the optimiser; a plan made before it has no limits to keep to
          limits: () => limitsRef?.sources,
        }),
      ),
    );
    // before the poller, whose fast reads it asks for while a limit is in force; after control,
    // whose commands it clips (docs/limits.md)
    limitsRef = new SiteLimitsFeature({
      config,
      site,
      db,
      clock,
      bus: bus.as('limits'),
      log: log.child({ feature: 'limits' }),
      poller,
      busFor: (d) => buses.readerFor(d.config),
      limitFor: (d, b) => activePowerLimitFor(d.config, b, config.limits.revertSeconds, config.devices, profiles),
      registry,
    });
    await features.start(later(limitsRef));
    // after limits, which takes its limits as the source `grid-operator`, so a stop ends the
    // client before the loop; loaded only when configured (docs/grid-operator.md)
    if (config.gridOperator) {
      const limits = limitsRef;
      const { GridOperatorClient } = await import('./gridop/client.js');
      const { siteLimitValues } = await import('./gridop/limits.js');
      const gridop = new GridOperatorClient({
        config: config.gridOperator,
        clock,
        log: log.child({ feature: 'gridop' }),
        stateFile: join(config.dataDir, 'gridop-state.json'),
        registry,
        // what the server is told of the site's DER and its readings (docs/grid-operator.md "What the client does")
        report: () => siteDerReport({ site, live: ops.live, clock, limits, control: config.control }),
        mirror: () => siteMirrorValues({ site, live: ops.live, clock }),
      });
      limits.sources.add({
        name: 'grid-operator',
        at: () => siteLimitValues(gridop.current()),
        // the client knows the controls in force, not the ones to come: a plan keeps to them in the running slot only
        over: (start, end) => {
          const now = clock.now();
          return start <= now && now < end ? siteLimitValues(gridop.current()) : {};
        },
      });
      await features.start(later(gridop));
      gridopRef = gridop;
    }
    await features.start(later(poller));
    // after the poller, so the first client's read finds the polls' queue in place; loaded only when configured
    if (config.modbusProxy.length > 0) {
      const { ModbusProxy } = await import('./proxy/proxy.js');
      await features.start(
        later(
          new ModbusProxy({
            entries: config.modbusProxy,
            site,
            busFor: (d) => buses.busFor(d),
            clock,
            log: log.child({ feature: 'modbus-proxy' }),
            profiles,
            managed: () => (control.enabled ? control.storages() : []),
            registry,
          }),
        ),
      );
    }
    await features.start(later(new BucketClosing({ bucketer, clock, pollPeriodMs, log, writes: ops.health, labels })));
    const keepYears = config.retention.fifteenMinuteYears;
    if (keepYears !== undefined) {
      await features.start(
        later(
          new Retention({
            db,
            clock,
            keepYears,
            closedUntil: () => bucketer.newestClosed,
            // also without an uplink now: messages left from one configured before are still unsent
            uplinkTopic: TOPIC.telemetry,
            log: log.child({ feature: 'retention' }),
          }),
        ),
      );
    }

    // one bound for the HTTP and WebSocket refusals: a host alternating between them meets one budget
    const refusals = new RefusalLog(log.child({ feature: 'http' }));
    const app = await buildApp({
      site,
      refusals,
      db,
      auth,
      control,
      https: tls.https,
      limits: config.limits.http,
      tariffQuota: config.limits.dynamicTariffs,
      siteLimits: limitsRef,
      now: () => clock.now(),
      logger: log.child({ feature: 'http' }),
      version: VERSION,
      ops,
      setup: opts.setup,
      ownerSessions: opts.ownerSessions,
    });
    await features.start({ name: 'http', start: () => undefined, stop: () => app.close() });
    // WebSocket clients hear 1001 (going away) before the HTTP server closes under them
    const ws = await features.start(
      new WsServer(app.server, bus.as('websocket'), wsAccess(auth), {
        log: log.child({ feature: 'ws' }),
        stream: (id) => site.stream(id),
        maxEntriesPerMessage: config.ws.maxEntriesPerMessage,
        maxPerClient: config.limits.http.maxWebSocketsPerClient,
        socScale: config.api.socScale,
        pingTimeoutMs: opts.wsPingTimeoutMs,
        grantRecheckMs: opts.wsGrantRecheckMs,
        refusals,
        registry,
      }),
    );
    if (opts.listen !== false) await app.listen({ host: config.http.host, port: config.http.port });
    const daemon = new Daemon(ctx, app, features, ws, uplink);
    ops.ready();
    log.info(
      {
        site: site.id,
        devices: config.devices.length,
        url: daemon.url,
        fingerprint: tls.fingerprint,
        version: VERSION,
      },
      'sitegw started',
    );
    return daemon;
  }

  /** Stops what start() started, last-first; every feature gets its stop even when one fails. */
  /** `restarting`: `sitegw run` starts again at once with a changed site.yaml (systemd hears RELOADING). */
  async stop(opts: { restarting?: boolean } = {}): Promise<void> {
    if (this.features.size === 0) return; // stopped already
    this.ctx.ops.stopping(opts.restarting);
    const failures = await this.features.stop();
    if (failures.length > 0) throw failures[0];
    this.ctx.log.info('sitegw stopped');
  }
}

const hooksOn = () => process.env.SITEGW_TEST_HOOKS === '1';

/** The clock rules' line from the last run of this boot, and where it is kept. */
function anchored(a: ClockAnchor): Pick<TimeLabelsOptions, 'startLine' | 'onTrusted'> {
  return { startLine: a.expectedNow(), onTrusted: (wall) => a.save(wall) };
}

/** The wall clock labels readings only when it can be right (docs/design.md "Field faults: what the numbers survive"); steps are logged. */
function timeLabels(
  clock: Clock,
  bucketer: Bucketer,
  log: Logger,
  notBefore: number,
  more: Pick<TimeLabelsOptions, 'synchronised' | 'onHeld' | 'confirmMs' | 'startLine' | 'onTrusted'>,
): TimeLabels {
  const iso = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : null);
  return new TimeLabels({
    clock,
    notBefore,
    synchronised: more.synchronised,
    confirmMs: more.confirmMs,
    startLine: more.startLine,
    onTrusted: more.onTrusted,
    onHeld: (o) => {
      if (o.kind === 'confirmed')
        log.info({ from: iso(o.from) }, 'wall clock step confirmed: the readings held since are recorded');
      else
        log.warn(
          { from: iso(o.from), to: iso(o.to), now: iso(o.returnedTo) },
          'wall clock step undone: the readings labelled in the stepped-to time are withdrawn, recording goes on',
        );
      more.onHeld?.(o);
    },
    newestStored: () => bucketer.newestClosed,
    onStep: (s) =>
      log.warn(
        { byMs: Math.round(s.byMs), now: iso(s.at) },
        `wall clock stepped ${s.byMs < 0 ? 'back' : 'forward'}: polling goes on (intervals run on the monotonic clock)`,
      ),
    onRefusal: (why, wall, floor) => {
      if (why === 'implausible')
        log.warn(
          { now: iso(wall), build: iso(notBefore) },
          'wall clock before this build: readings are not recorded until it is set',
        );
      else if (why === 'behind')
        log.warn(
          { now: iso(wall), newest: iso(floor) },
          'wall clock behind data already recorded: readings are not recorded until it passes it',
        );
      else log.info({ now: iso(wall) }, 'wall clock usable: readings are recorded again');
    },
  });
}
