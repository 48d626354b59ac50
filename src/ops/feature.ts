/**
 * Installer operations as one feature of the daemon: health, metrics, the live values of the
 * status page, and the conversation with systemd (READY, WATCHDOG, STATUS, STOPPING). start()
 * subscribes and builds; ready() is called once the daemon listens; stopping() before the stop.
 */

import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import type { EventBus } from '../core/events.js';
import type { FeatureList } from '../core/feature.js';
import type { StreamDef } from '../core/streams.js';
import { OptimiserLoop } from '../optimiser/loop.js';
import type { PlanChart } from '../optimiser/plan-chart.js';
import type { Site } from '../site/site.js';
import type { BucketerStats } from '../telemetry/bucketer.js';
import { type StreamNow, streamNow } from '../telemetry/now.js';
import { describeStorageError, StorageWatch } from './data-disk.js';
import { Health, type HealthSources, TICK_SLACK_MS } from './health.js';
import { type HistoryView, type SiteHistory, siteHistory } from './history.js';
import { type DatabaseReplaced, describeReplaced } from './integrity.js';
import { LiveValues } from './live.js';
import { Metrics } from './metrics.js';
import { SdNotify, watchdogMs } from './sd-notify.js';
import { type StatusView, statusView } from './status-view.js';
import { installTestHooks } from './test-hooks.js';
import { Watchdog } from './watchdog.js';

export interface OpsOptions {
  site: Site;
  db: Database;
  dbFile: string;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  version: string;
  bucketer: {
    stats(): BucketerStats;
    lifetime(streamId: string): { energyIn: number | null; energyOut: number | null } | undefined;
  };
  scheduler: HealthSources['scheduler'] & { stop(): Promise<void> };
  /** the wall clock's steps and labels (core/time-labels.ts), shown in health */
  timeLabels?: HealthSources['timeLabels'];
  /** the daemon's running features: their health goes into /healthz and the status page */
  features: FeatureList;
  /** what the integrity check did at start */
  replaced: DatabaseReplaced | null;
  /** why the database is open for this process alone (a start on a full disk), or null */
  exclusive?: string | null;
  /** why the database is open for reading only (a read-only data directory), or null */
  readOnly?: string | null;
  /** credentials.db was missing at start: what the backups gave back, or null */
  credentialsLost?: string | null;
  /** how often the data disk is looked at (the poll period), real ms */
  storageCheckMs?: number;
  /** what waits in memory for the disk (the token service's unsaved tokens) */
  unsaved?: { pending(): boolean; save(): void };
  env?: NodeJS.ProcessEnv;
}

export class OpsFeature {
  readonly health: Health;
  readonly metrics: Metrics;
  readonly live: LiveValues;
  readonly notify: SdNotify;
  readonly watchdog: Watchdog;
  readonly storage: StorageWatch;
  private removeHooks: (() => void) | null = null;

  constructor(private readonly opts: OpsOptions) {
    const { site, clock, bus, scheduler, log } = opts;
    const env = opts.env ?? process.env;
    const period = watchdogMs(env);
    this.health = new Health({
      clock,
      site,
      scheduler,
      timeLabels: opts.timeLabels,
      features: opts.features,
      tickSlackMs: Math.min(TICK_SLACK_MS, period ?? TICK_SLACK_MS),
      // a token, bucket or grid event the disk refused names the file and errno as the probe's does
      describeWrite: (err) => describeStorageError(err, opts.dbFile),
    });
    this.metrics = new Metrics({
      site,
      bus,
      clock,
      health: this.health,
      bucketer: opts.bucketer,
      dbFile: opts.dbFile,
      streamsNow: () => this.streamsNow(),
    });
    this.live = new LiveValues(bus, site);
    this.storage = new StorageWatch({
      db: opts.db,
      dbFile: opts.dbFile,
      log: log.child({ feature: 'storage' }),
      noteWrite: (err, described) => this.health.noteWrite(err, described),
      failing: () => this.health.writeFailing,
      pending: () => opts.unsaved?.pending() ?? false,
      onWritable: () => opts.unsaved?.save(),
      everyMs: opts.storageCheckMs ?? 10_000,
      onWalRemoved: (file) =>
        this.health.noteAtStart(
          `${file} was removed while running: its writes were checkpointed into the database and a new WAL started; nothing stored was lost`,
        ),
    });
    this.notify = new SdNotify({ env, log: log.child({ feature: 'sd_notify' }) });
    this.watchdog = new Watchdog({
      notify: this.notify,
      health: this.health,
      log: log.child({ feature: 'watchdog' }),
      periodMs: period,
    });
  }

  start(): void {
    if (this.opts.exclusive) {
      this.health.noteAtStart(
        'the data disk was full at start: the database is open for this process alone, so `sitegw clients` and `sitegw backup` wait until sitegw is restarted with room on the disk',
      );
    }
    // failing from the start, with the reason: every write will be refused (the probe keeps it so)
    if (this.opts.readOnly)
      this.health.noteWrite(Object.assign(new Error('read-only'), { code: 'SQLITE_READONLY' }), this.opts.readOnly);
    if (this.opts.credentialsLost) this.health.noteAtStart(this.opts.credentialsLost);
    const r = this.opts.replaced;
    if (r) {
      this.health.noteAtStart(describeReplaced(r));
    }
    this.metrics.start();
    this.live.start();
    this.storage.start();
    this.notify.start();
  }

  /** The daemon listens and polls: tell systemd, start the watchdog, announce a replaced database. */
  ready(): void {
    this.metrics.markReady();
    this.notify.notify({ READY: '1', STATUS: this.health.summary() });
    this.watchdog.start();
    this.removeHooks = installTestHooks(this.opts.env ?? process.env, {
      scheduler: this.opts.scheduler,
      log: this.opts.log,
    });
    const r = this.opts.replaced;
    // after every feature subscribed, so the uplink hears of it too
    if (r) this.opts.bus.emit('databaseReplaced', { movedTo: r.movedTo, reason: r.reason, at: r.at });
  }

  /** Every stream's live values (telemetry/now.ts): what /metrics and Home Assistant show. */
  streamsNow(): { def: StreamDef; now: StreamNow }[] {
    const { site, clock, bucketer } = this.opts;
    const t = clock.now();
    return site
      .streams()
      .map((def) => ({ def, now: streamNow(def, this.live.current(def.id, t), bucketer.lifetime(def.id)) }));
  }

  status(): StatusView {
    const { site, db, clock, version } = this.opts;
    return statusView({ site, db, clock, version, health: this.health, live: this.live, features: this.opts.features });
  }

  /** The stored history the status page charts (history.ts). */
  history(view: HistoryView): SiteHistory {
    const { site, db, clock } = this.opts;
    return siteHistory(db, site, view, clock.now());
  }

  /** The optimiser's current plans with their prices and forecasts: the status page's chart. */
  planCharts(): PlanChart[] {
    const loop = this.opts.features.get('optimiser');
    return loop instanceof OptimiserLoop ? loop.planCharts() : [];
  }

  /**
   * `restarting`: a restart in the same process for a changed site.yaml (src/cli/run.ts). systemd
   * hears RELOADING=1, not STOPPING=1: after STOPPING it would wait for the process to end and
   * kill it at TimeoutStopSec; the next start's READY=1 ends the reload.
   */
  stopping(restarting = false): void {
    this.watchdog.stop();
    // MONOTONIC_USEC: CLOCK_MONOTONIC, which node's hrtime reads on Linux; newer systemd asks for it with RELOADING
    if (restarting)
      this.notify.notify({
        RELOADING: '1',
        MONOTONIC_USEC: String(process.hrtime.bigint() / 1000n),
        STATUS: 'restarting with the changed site.yaml',
      });
    else this.notify.notify({ STOPPING: '1', STATUS: 'stopping' });
  }

  async stop(): Promise<void> {
    this.watchdog.stop();
    this.removeHooks?.();
    this.storage.stop();
    this.live.stop();
    this.metrics.stop();
    await this.notify.stop();
  }
}
