import { join, resolve } from 'node:path';
import { Duration } from 'luxon';
import type { Logger } from 'pino';
import type { SiteConfig } from '../config/types.js';
import { type Clock, ScaledClock } from '../core/clock.js';
import { createLogger, silentLogger } from '../core/log.js';
import { Daemon } from '../main.js';
import { defaultSimConfig, type SimConfig } from '../sim/config.js';
import { type SimServers, startSimServers } from '../sim/servers.js';
import { SimSite } from '../sim/site.js';
import { newestBucketEnd } from '../store/buckets.js';
import { type DemoCredentials, ensureDemoCredentials } from './credentials.js';
import { DEMO_EXPORT_LIMIT_W, demoSiteConfig } from './default-site.js';
import { prefillHistory } from './prefill.js';
import { type SimControl, startSimControl } from './sim-control.js';

export interface DemoOptions {
  /** HTTP port; 0 picks a free one */
  port: number;
  host?: string;
  dataDir: string;
  /** ISO 8601 duration of history to pre-fill, e.g. P2D */
  history?: string;
  /** clock speed: 60 closes a 15-minute bucket every 15 s */
  speed: number;
  /** 'auto' = free ports; otherwise the simulator's inverter and meter ports (0: a free one) */
  modbusPorts: 'auto' | { inverter: number; meter: number };
  /** the simulator control endpoint's port; 0 or absent: a free one */
  simControlPort?: number;
  pollSeconds?: number;
  sim?: SimConfig;
  /**
   * clock origin (ms epoch): the simulated "now" at start; default the real now, or at a speed
   * other than 1 the end of the newest bucket already in the data directory when that is later
   * (a restarted fast demo continues its own time instead of overlapping what it sent before)
   */
  start?: number;
  /** site.id of the demo site (default `demo-site`); the MQTT client ids and topic prefixes follow it */
  siteId?: string;
  quiet?: boolean;
  log?: Logger;
  /** adjusts the validated site config before the daemon starts (tests: TLS, auth limits) */
  configure?: (config: SiteConfig) => void;
  /** real time of the token service, ms epoch (tests expire codes and tokens with it) */
  authNow?: () => number;
  /** WebSocket ping timeout, real ms (tests shorten it) */
  wsPingTimeoutMs?: number;
  /** how often open WebSockets' grants are checked again, real ms (tests shorten it) */
  wsGrantRecheckMs?: number;
  /** MQTT broker URL: the demo's gateway uplinks to it (uplink defaults otherwise) */
  mqtt?: string;
  /** MQTT broker URL of a Home Assistant: the demo's gateway announces its devices there (homeassistant defaults otherwise) */
  homeassistant?: string;
  /** aborted by a stop signal: the history pre-fill ends where it is, so the start returns at once */
  stopping?: AbortSignal;
  /**
   * the history pre-fill runs in the background, from `beginFill()` on: startDemo returns with the
   * API answering what is filled so far (`filled` settles at its end; polling starts then).
   * Default: startDemo waits for it
   */
  fillInBackground?: boolean;
  /**
   * the site's export limit, W (limits.exportW), with the simulated inverter honouring SunSpec 704
   * where `sim` names no limit model; null: none. Default DEMO_EXPORT_LIMIT_W at speed 1, none faster: the
   * limits loop reads the meter every simulated second, which a fast clock would make a busy loop
   */
  exportLimitW?: number | null;
}

export interface Demo {
  daemon: Daemon;
  sim: SimSite;
  servers: SimServers;
  clock: Clock;
  url: string;
  siteId: string;
  /** simulated time the history pre-fill reached so far (the start time when there was none) */
  prefilledUntil: number;
  /** settles when the history pre-fill has ended (at once without one or without fillInBackground) */
  filled: Promise<void>;
  /** with fillInBackground: the fill begins (the CLI calls it once its banner is out) */
  beginFill(): void;
  /** the demo client and owner, as written to <dataDir>/demo-credentials.json */
  credentials: DemoCredentials;
  /** the simulator's own control endpoint (open/close the grid relay), not the gateway's API */
  simControl: SimControl;
  /**
   * stop and start the daemon alone, on the same data directory and simulator; `whileStopped`
   * runs in between (the simulator and its clock go on meanwhile)
   */
  restartDaemon(whileStopped?: () => void | Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

export function parseHistory(text: string | undefined): number {
  if (!text) return 0;
  const d = Duration.fromISO(text);
  if (!d.isValid || d.toMillis() <= 0)
    throw new Error(`--history must be an ISO 8601 duration such as P2D or PT6H, got '${text}'`);
  if (d.toMillis() > 366 * 86_400_000) throw new Error(`--history is at most P366D, got '${text}'`);
  return d.toMillis();
}

/**
 * Where a demo's clock starts: the real now, unless a fast demo already ran on this data
 * directory past it (its simulated time ran ahead), then where its newest bucket ends.
 */
function demoOrigin(opts: DemoOptions): number {
  const now = Date.now();
  if (opts.speed === 1) return now;
  const end = newestBucketEnd(join(resolve(opts.dataDir), 'sitegw.db'));
  return end !== null && end > now ? end : now;
}

/** The simulated site on real Modbus TCP servers and the gateway polling it: `sitegw demo`. */
export async function startDemo(opts: DemoOptions): Promise<Demo> {
  if (!(opts.speed > 0 && opts.speed <= 10_000)) throw new Error(`--speed must be in (0, 10000], got ${opts.speed}`);
  const historyMs = parseHistory(opts.history);
  const log = opts.log ?? (opts.quiet ? silentLogger() : createLogger());
  const clock = new ScaledClock(opts.speed, opts.start ?? demoOrigin(opts));
  const exportLimitW =
    opts.exportLimitW === undefined ? (opts.speed === 1 ? DEMO_EXPORT_LIMIT_W : null) : opts.exportLimitW;
  let simConfig = opts.sim ?? defaultSimConfig();
  // where the demo holds a limit its inverter can be limited (docs/limits.md "Which inverters the loop limits")
  if (exportLimitW !== null && !simConfig.inverter.limitModels?.length)
    simConfig = { ...simConfig, inverter: { ...simConfig.inverter, limitModels: [704] } };
  const sim = new SimSite(simConfig, clock.now() - historyMs);
  const ports = opts.modbusPorts === 'auto' ? { inverter: 0, meter: 0 } : opts.modbusPorts;
  const servers = await startSimServers(sim, clock, {
    host: '127.0.0.1',
    inverterPort: ports.inverter,
    meterPort: ports.meter,
  });
  // at high speeds a real 10 s poll would leave buckets with a handful of samples
  const pollSeconds = opts.pollSeconds ?? (opts.speed >= 100 ? 30 : 10);
  const config = demoSiteConfig(servers, {
    httpHost: opts.host ?? '127.0.0.1',
    httpPort: opts.port,
    dataDir: resolve(opts.dataDir),
    pollSeconds,
    batteryBlocks: simConfig.battery.blocks.length,
    uplinkUrl: opts.mqtt,
    homeassistantUrl: opts.homeassistant,
    siteId: opts.siteId,
    ...(exportLimitW === null ? {} : { exportLimitW }),
  });
  opts.configure?.(config);

  let prefilledUntil = clock.now() - historyMs;
  let beginFill: () => void = () => undefined;
  const fillGate = new Promise<void>((resolve) => (beginFill = resolve));
  let filledNow: () => void = () => undefined;
  const filled = new Promise<void>((resolve) => (filledNow = resolve));
  const startDaemon = (withHistory: boolean) =>
    Daemon.start({
      config,
      clock,
      log,
      authNow: opts.authNow,
      wsPingTimeoutMs: opts.wsPingTimeoutMs,
      wsGrantRecheckMs: opts.wsGrantRecheckMs,
      fillInBackground: withHistory && opts.fillInBackground ? fillGate : undefined,
      beforePolling:
        withHistory && historyMs > 0
          ? async (ctx, stop) => {
              const stops = opts.stopping ? AbortSignal.any([stop, opts.stopping]) : stop;
              try {
                await prefillHistory(ctx, sim, clock.now() - historyMs, stops, (t) => (prefilledUntil = t));
              } finally {
                filledNow();
              }
            }
          : undefined,
    });

  let daemon: Daemon;
  let credentials: DemoCredentials;
  try {
    daemon = await startDaemon(true);
    if (!(historyMs > 0)) filledNow();
  } catch (err) {
    await servers.close();
    throw err;
  }
  try {
    credentials = await ensureDemoCredentials(daemon);
  } catch (err) {
    await daemon.stop();
    await servers.close();
    throw err;
  }
  const simControl = await startSimControl(sim, opts.simControlPort ?? 0);
  const demo: Demo = {
    daemon,
    sim,
    servers,
    simControl,
    clock,
    get url() {
      return demo.daemon.url;
    },
    siteId: config.site.id,
    get prefilledUntil() {
      return prefilledUntil;
    },
    filled,
    beginFill,
    credentials,
    async restartDaemon(whileStopped) {
      await demo.daemon.stop();
      await whileStopped?.();
      demo.daemon = await startDaemon(false);
      demo.credentials = await ensureDemoCredentials(demo.daemon);
    },
    async stop() {
      filledNow(); // a fill stopped before it began settles too
      await simControl.close();
      await demo.daemon.stop();
      await servers.close();
    },
  };
  return demo;
}
