/**
 * The site's limits as a feature (docs/limits.md): the sources, the loop that holds the limits at
 * the grid meter through the inverters' active power limit, and the fail-safe.
 *
 * - While a limit is in force the poller reads the grid meter and the inverters every second, and
 *   every meter reading whose inverters' readings of the same poll are in runs one step of the
 *   controller (controller.ts); a command is written when it moved by more than DEADBAND of the
 *   rating, and again as the device's revert timer needs (a third of it).
 * - A grid meter silent for SILENT_MS puts the inverters at the fail-safe (source `fail-safe`).
 * - At start, where the device keeps a reversion value (SunSpec 704), the fail-safe is written
 *   there: a dead gateway leaves the site at it within `limits.revertSeconds`.
 * - stop() leaves the inverters at the fail-safe where one is configured (a restart or an upgrade
 *   must not open the connection's export limit; a 704 device would fall to it anyway), and
 *   writes `none` where none is.
 */
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { SiteConfig } from '../config/types.js';
import type { SiteGridLimits } from '../control/decide.js';
import type { ActivePowerLimit, PowerLimitCommand } from '../core/active-power-limit.js';
import { Retry } from '../core/backoff.js';
import type { Reading } from '../core/channels.js';
import type { Clock, ClockTimer } from '../core/clock.js';
import type { EventBus } from '../core/events.js';
import type { Feature, FeatureHealth } from '../core/feature.js';
import type { RegisterReader } from '../core/register-reader.js';
import type { RegisterWriter } from '../core/storage-control.js';
import { streamIds } from '../core/streams.js';
import type { DeviceState, Site } from '../site/site.js';
import { decideLimits, failSafeCommands, houseOf, type LoopDecision } from './controller.js';
import { priceSource } from './price.js';
import { scheduleSource } from './schedule.js';
import { LIMIT_NAMES, type LimitName, type LimitsInForce, SiteLimits } from './sources.js';
import { curtailedW, type SiteLimitsStatus } from './status.js';

export type LimitBus = RegisterReader & RegisterWriter;

/** a meter reading older than this (site ms) is a silent meter: the fail-safe */
export const SILENT_MS = 5000;
/** the loop's period while a limit is in force, site ms */
export const FAST_POLL_MS = 1000;
/** a command that moved less than this fraction of the inverter's rating is not written again (until its keep-alive) */
export const DEADBAND = 0.0025;
/**
 * how long after a failed look for an inverter's limit the next one is made, site ms: from the first
 * to the most, doubling. An inverter that missed one answer at start (the gateway up before it, a
 * loaded box) is held within seconds, not left unlimited for the longest wait under a limit in force
 */
const LOOK_AGAIN_MS = { first: FAST_POLL_MS, most: 30_000 };
const LIMIT_METRIC = 'sitegw_site_limit_watts';
const CAP_METRIC = 'sitegw_site_generation_cap_watts';
const CURTAILED_METRIC = 'sitegw_site_curtailed_watts';

export interface SiteLimitsDeps {
  config: SiteConfig;
  site: Site;
  db: Database;
  clock: Clock;
  bus: EventBus;
  log: Logger;
  /** reads the meter and the inverters every second while a limit is in force */
  poller: { pollFast(ids: ReadonlySet<string> | null, periodMs?: number): void };
  busFor: (device: DeviceState) => LimitBus;
  limitFor: (device: DeviceState, bus: LimitBus) => Promise<ActivePowerLimit | undefined>;
  registry?: Registry;
}

interface Inverter {
  device: DeviceState;
  bus: LimitBus;
  limit: ActivePowerLimit | undefined | null;
  ratedW: number;
  acW: number | undefined;
  acTs: number;
  /** when its last reading came (monotonic ms): silent after SILENT_MS without one */
  acAt: number | undefined;
  /** the command on the device and when it was written (site ms) */
  last: { command: PowerLimitCommand; at: number } | null;
  failSafeWritten: boolean;
  /** the write on its way: one at a time per inverter, and a slow one holds up no other */
  writing: Promise<void> | null;
  /** failed looks for its limit in a row, and when (monotonic ms) the next is made: each doubles the wait */
  look: Retry;
  /** its last write failed (logged once until one works) */
  failing: boolean;
}

/** one poll whose meter and inverters were all read (`at`: when the meter's came, monotonic ms) */
interface Poll {
  ts: number;
  gridW: number;
  /** the limited inverters read in it (those silent are not) */
  acW: Map<Inverter, number>;
  /** which they are: houses of polls with other inverters in them are not compared */
  who: string;
  at: number;
}

const pollOf = (ts: number, gridW: number, read: readonly Inverter[], at: number): Poll => ({
  ts,
  gridW,
  acW: new Map(read.map((x) => [x, x.acW!])),
  who: read.map((x) => x.device.config.id).join(','),
  at,
});

export class SiteLimitsFeature implements Feature {
  readonly name = 'limits';
  /** the sources; the grid operator's client adds its own (`grid-operator`) */
  readonly sources = new SiteLimits();
  private readonly inverters: Inverter[] = [];
  private readonly unsubscribe: (() => void)[] = [];
  private grid: { w: number; ts: number; at: number } | null = null;
  /**
   * The last poll whose meter and inverters were all read: the house is grid + output of one
   * moment. A step between the meter's reading and an inverter's of the same poll would add the new
   * grid to the old output and count a change of output twice (a limit that just took effect
   * raised again at once: 2.3 kW exported in a zero-export hold on a loaded machine).
   */
  private polled: Poll | null = null;
  /** the whole poll before it: a house that changed is followed once both say so (controller.ts) */
  private polledBefore: Poll | null = null;
  /** which inverters the last decision's house was of */
  private heldWho = '';
  private timer: ClockTimer | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  private startedAt = 0;
  private fast = false;
  /** the last step's decision, for the API, metrics and the status page */
  last: (LoopDecision & { inForce: LimitsInForce; failSafe: boolean }) | null = null;
  private gauge: Gauge | undefined;
  /** the first look for the inverters' limits, started with the feature */
  private preparing: Promise<void> | undefined;
  /** inverters whose limit could not be read yet (logged once) */
  private readonly unread = new Set<string>();

  constructor(private readonly d: SiteLimitsDeps) {}

  /** the fail-safe output, W: limits.failSafeW, else limits.exportW; undefined when neither is set */
  get failSafeW(): number | undefined {
    const l = this.d.config.limits;
    return l.failSafeW ?? l.exportW;
  }

  async start(): Promise<void> {
    const { config, site, db, bus, clock } = this.d;
    const l = config.limits;
    const fixed: Partial<Record<LimitName, number>> = {};
    for (const n of LIMIT_NAMES) if (l[n] !== undefined) fixed[n] = l[n];
    this.sources.add({ name: 'site.yaml', at: () => fixed, over: () => fixed });
    this.sources.add(scheduleSource(db));
    const price = priceSource(db, config);
    if (price) this.sources.add(price);
    for (const device of site.byRole('inverter'))
      this.inverters.push({
        device,
        bus: this.d.busFor(device),
        limit: null,
        ratedW: 0,
        acW: undefined,
        acTs: Number.NaN,
        acAt: undefined,
        last: null,
        failSafeWritten: false,
        writing: null,
        look: new Retry(LOOK_AGAIN_MS.first, LOOK_AGAIN_MS.most, () => this.d.clock.mono()),
        failing: false,
      });
    const meter = site.byRole('grid-meter')[0];
    const meterStream = meter && streamIds.gridMeter(meter.config.id);
    this.unsubscribe.push(bus.on('reading', (r) => this.heard(r, meterStream)));
    this.registerMetrics();
    this.stopped = false;
    this.startedAt = clock.mono();
    // a site with limits in site.yaml: the devices' limits looked for and the fail-safe written at
    // once, in the background (an unreachable inverter's timeouts must not hold up the daemon's
    // start); one without: nothing is read or written until a limit comes into force
    if (this.failSafeW !== undefined || Object.keys(this.inForce()).length > 0) this.preparing = this.prepare();
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const u of this.unsubscribe.splice(0)) u();
    if (this.timer) this.d.clock.clearTimeout(this.timer);
    await this.running;
    await this.preparing;
    this.d.poller.pollFast(null);
    const fs = this.failSafeW;
    const targets = this.inverters.filter((x) => x.limit && x.last);
    const commands =
      fs === undefined
        ? targets.map((x) => ({ id: x.device.config.id, command: { kind: 'none' } as PowerLimitCommand }))
        : failSafeCommands(this.rated(targets), fs);
    // an inverter's own export limiter is left at the fail-safe whole, not a share of it
    const own = this.ownExportLimits(commands, fs).filter((c) => targets.some((x) => x.device.config.id === c.id));
    await this.write(own, true).catch((err) => this.d.log.warn({ err }, 'limits: the stop write failed'));
    if (this.gauge)
      for (const m of [LIMIT_METRIC, CAP_METRIC, CURTAILED_METRIC]) this.d.registry?.removeSingleMetric(m);
  }

  health(): FeatureHealth {
    const problems: string[] = [];
    if (this.last?.failSafe) problems.push('the grid meter is silent: the inverters are at the fail-safe');
    const mono = this.d.clock.mono();
    const quiet = this.inverters.filter((x) => x.limit && this.isSilent(x, mono)).map((x) => x.device.config.id);
    if (quiet.length > 0 && this.last && !this.last.failSafe && Object.keys(this.last.inForce).length > 0)
      problems.push(
        `a limit is in force and ${quiet.join(', ')} do not answer: left out of the loop, the others hold the export at the meter`,
      );
    const missing = this.inverters.filter((x) => x.limit === undefined).map((x) => x.device.config.id);
    if (missing.length > 0 && this.last?.capW !== null && this.last?.capW !== undefined)
      problems.push(`a limit is in force and ${missing.join(', ')} offer no active power limit`);
    const f = this.last?.inForce;
    const own = this.inverters.filter((x) => x.limit?.holds === 'export').map((x) => x.device.config.id);
    if (f?.generationW && !f.exportW && own.length > 0)
      problems.push(
        `a generation limit is in force and ${own.join(', ')} can limit only the export (their own limiter): their output is not held`,
      );
    return problems.length ? { problems } : {};
  }

  /** The inverters' rated output together, W, as read from them; 0 before any was read. */
  ratedW(): number {
    return this.inverters.reduce((a, x) => a + x.ratedW, 0);
  }

  /** Which limit is in force now, each with its source. */
  inForce(): LimitsInForce {
    return this.sources.inForce(this.d.clock.now());
  }

  /** What a user is shown (status.ts): the limits in force, the cap and the curtailed power now. */
  status(): SiteLimitsStatus {
    const last = this.last;
    const limited = this.inverters.filter((x) => x.limit);
    const capW = last?.capW ?? null;
    return {
      // the sources now (a schedule just written shows at once), the fail-safe's while it holds
      inForce: last?.failSafe ? last.inForce : this.inForce(),
      capW: capW === null ? null : Math.round(capW),
      binding: last?.binding?.limit ?? null,
      curtailedW: curtailedW(
        capW,
        limited.reduce((a, x) => a + x.ratedW, 0),
        limited.reduce((a, x) => a + Math.max(0, x.acW ?? 0), 0),
      ),
      failSafe: last?.failSafe ?? false,
    };
  }

  /** The import and export limits in force as control clips its commands to them (charging shed first). */
  gridLimits(): SiteGridLimits {
    const f = this.inForce();
    const out: SiteGridLimits = {};
    if (f.importW) out.importW = { watts: f.importW.watts, label: `limits.importW (${f.importW.source})` };
    if (f.exportW) out.exportW = { watts: f.exportW.watts, label: `limits.exportW (${f.exportW.source})` };
    return out;
  }

  /** Finds each inverter's limit and writes the fail-safe where the device keeps a reversion value. */
  private async prepare(): Promise<void> {
    const fs = this.failSafeW;
    for (const x of this.inverters) {
      const id = x.device.config.id;
      if (x.limit !== null || x.look.waitLeft() > 0) continue;
      x.look.trying();
      try {
        const limit = await this.capability(x);
        if (!limit) {
          this.d.log.warn({ device: id }, 'limits: the inverter offers no active power limit: it cannot be curtailed');
          continue;
        }
        const r = limit.revert;
        if ((r.kind === 'revert-unlimited' || r.kind === 'keep-alive') && fs !== undefined)
          this.d.log.warn(
            { device: id, revert: r.kind, seconds: r.seconds },
            'limits: this inverter does not stay at the fail-safe when the gateway is gone: set its own export limiter (docs/limits.md)',
          );
      } catch (err) {
        x.look.failed();
        // once per device until it answers: a later step asks again
        if (!this.unread.has(id))
          this.d.log.warn(
            { err, device: id },
            'limits: the inverter’s active power limit could not be read; tried again after 1 s, then less often, up to every 30 s',
          );
        this.unread.add(id);
      }
    }
    if (fs !== undefined) await this.writeFailSafes(fs);
  }

  private async capability(x: Inverter): Promise<ActivePowerLimit | undefined> {
    const found = await this.d.limitFor(x.device, x.bus);
    // an own export limiter takes watts, not a share of the cap: its rating (none in some
    // sources: SolarEdge, Victron) only weighs the other inverters' shares
    if (found?.holds === 'export') x.ratedW = await found.ratedW(x.bus).catch(() => 0);
    else if (found) x.ratedW = await found.ratedW(x.bus);
    x.limit = found;
    x.look.succeeded();
    this.unread.delete(x.device.config.id);
    return found;
  }

  private async writeFailSafes(fs: number): Promise<void> {
    const ready = this.inverters.filter((x) => x.limit?.setFailSafe && !x.failSafeWritten);
    for (const c of failSafeCommands(this.rated(this.inverters.filter((x) => x.limit)), fs)) {
      const x = ready.find((y) => y.device.config.id === c.id);
      if (!x || c.command.kind !== 'limit' || x.writing) continue;
      const watts = c.command.watts;
      await this.lane(x, async () => {
        await x.limit!.setFailSafe!(x.bus, watts);
        x.failSafeWritten = true;
        this.d.log.info({ device: c.id, watts }, 'limits: fail-safe written to the device’s reversion value');
      });
    }
  }

  private rated(xs: readonly Inverter[]) {
    return xs.map((x) => ({ id: x.device.config.id, ratedW: x.ratedW }));
  }

  private heard(r: Reading, meterStream: string | undefined): void {
    if (r.streamId === meterStream) {
      const w = r.values.power_W;
      if (typeof w === 'number') this.grid = { w, ts: r.ts, at: this.d.clock.mono() };
    } else {
      const x = this.inverters.find((y) => streamIds.inverter(y.device.config.id) === r.streamId);
      const ac = r.values.power_AC_W;
      if (!x || typeof ac !== 'number') return;
      // the channel's sign: − while delivering
      x.acW = -ac;
      x.acTs = r.ts;
      x.acAt = this.d.clock.mono();
    }
    // one step per poll: the meter and every limited inverter that answers, of the same poll
    const g = this.grid;
    if (!g || g.ts === this.polled?.ts) return;
    const mono = this.d.clock.mono();
    const limited = this.inverters.filter((y) => y.limit);
    if (!limited.every((y) => y.acTs === g.ts || this.isSilent(y, mono))) return;
    const read = limited.filter((y) => y.acTs === g.ts);
    this.polledBefore = this.polled;
    this.polled = pollOf(g.ts, g.w, read, g.at);
    void this.wake();
  }

  /**
   * No reading for SILENT_MS (none since the start: SILENT_MS after it). Its output is in the
   * meter's reading; the others hold the limits without it (controller.ts).
   */
  private isSilent(x: Inverter, mono: number): boolean {
    return mono - (x.acAt ?? this.startedAt) > SILENT_MS;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.d.clock.setTimeout(() => {
      void this.wake().finally(() => this.schedule());
    }, FAST_POLL_MS);
  }

  /** One step now (or right after the one running). */
  private wake(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= this.step()
      .catch((err) => this.d.log.error({ err }, 'limits step failed'))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async step(): Promise<void> {
    const { clock } = this.d;
    const now = clock.now();
    const mono = clock.mono();
    const inForce = this.sources.inForce(now);
    const any = Object.keys(inForce).length > 0;
    this.setFast(any);
    if (!any && this.inverters.every((x) => !x.last)) {
      this.last = null;
      return;
    }
    // an inverter not found yet is looked for in the background: a dead one holds up no step
    if (this.inverters.some((x) => x.limit === null && x.look.waitLeft() <= 0)) void this.prepare();
    const fs = this.failSafeW;
    if (fs !== undefined) void this.writeFailSafes(fs);
    const limited = this.inverters.filter((x) => x.limit);
    const lastHeard = this.grid?.at ?? this.startedAt;
    const silent = any && mono - lastHeard > SILENT_MS;
    let decision: LoopDecision;
    let effective = inForce;
    if (silent) {
      // no meter, no export to measure: the inverters at the fail-safe, else at the export limit in force
      const watts = Math.min(
        fs ?? inForce.exportW?.watts ?? Number.POSITIVE_INFINITY,
        inForce.generationW?.watts ?? Number.POSITIVE_INFINITY,
      );
      effective = Number.isFinite(watts) ? { generationW: { watts, source: 'fail-safe' } } : {};
      decision = decideLimits({
        limits: effective,
        gridW: 0,
        inverters: limited.map((x) => ({ id: x.device.config.id, ratedW: x.ratedW, acW: 0 })),
      });
    } else {
      // the house is the meter plus the output of every inverter that answers, all of one poll: the
      // last whole poll while one is recent, else the newest readings of those that answer
      if (!this.grid) return;
      const recent = this.polled && mono - this.polled.at <= SILENT_MS ? this.polled : null;
      const poll =
        recent ??
        pollOf(
          this.grid.ts,
          this.grid.w,
          limited.filter((x) => x.acW !== undefined && !this.isSilent(x, mono)),
          this.grid.at,
        );
      // an inverter not read yet and not silent yet (the first seconds): its share cannot be known
      if (limited.some((x) => !poll.acW.has(x) && !this.isSilent(x, mono))) return;
      const read = limited.filter((x) => poll.acW.has(x));
      const before = recent && this.polledBefore?.who === poll.who ? this.polledBefore : null;
      // other inverters than the last step's (one stopped answering, or answers again): the first
      // poll of them alone may be mid-step, and nothing held is of them to compare with: the next
      if (recent && !before && this.heldWho !== '' && this.heldWho !== poll.who) return;
      decision = decideLimits({
        limits: inForce,
        gridW: poll.gridW,
        houseBeforeW: before
          ? houseOf(
              before.gridW,
              read.map((x) => ({ acW: before.acW.get(x)! })),
            )
          : undefined,
        houseHeldW: before && this.heldWho === poll.who && !this.last?.failSafe ? this.last?.houseW : undefined,
        silentW: limited.reduce((a, x) => a + (poll.acW.has(x) ? 0 : Math.max(0, x.acW ?? 0)), 0),
        inverters: read.map((x) => ({
          id: x.device.config.id,
          ratedW: x.ratedW,
          acW: poll.acW.get(x)!,
          ownLimiter: x.limit?.holds === 'export',
        })),
      });
      this.heldWho = poll.who;
    }
    if (silent !== (this.last?.failSafe ?? false))
      this.d.log.warn(
        silent
          ? 'limits: the grid meter is silent: inverters at the fail-safe'
          : 'limits: the grid meter answers again',
      );
    this.last = { ...decision, inForce: effective, failSafe: silent };
    if (decision.importOverW > 0)
      this.d.log.debug(
        { overW: decision.importOverW },
        'limits: import over importW with no battery charge left to shed',
      );
    // no limit ever written and none in force: nothing to write (a site without limits gets no writes)
    const commands = decision.commands.filter(
      (c) => decision.capW !== null || this.inverters.find((x) => x.device.config.id === c.id)?.last,
    );
    // silent meter: the fail-safe is the export limit an inverter's own limiter holds
    await this.write(
      this.ownExportLimits(commands, silent ? effective.generationW?.watts : effective.exportW?.watts),
      false,
    );
  }

  /**
   * An inverter whose limit is its own export limiter (`holds: 'export'`, a profile's
   * device-export-limit map) is given the export limit in force, which it holds at its own meter,
   * instead of a share of the cap; none without one (a generation limit alone it cannot hold).
   */
  private ownExportLimits(
    commands: readonly { id: string; command: PowerLimitCommand }[],
    exportW: number | undefined,
  ): { id: string; command: PowerLimitCommand }[] {
    const holders = this.inverters.filter((x) => x.limit?.holds === 'export');
    if (holders.length === 0) return [...commands];
    const exp = exportW;
    const own = (x: Inverter) => ({
      id: x.device.config.id,
      command: exp !== undefined ? ({ kind: 'limit', watts: exp } as const) : ({ kind: 'none' } as const),
    });
    return [
      ...commands.filter((c) => !holders.some((x) => x.device.config.id === c.id)),
      ...holders.filter((x) => exp !== undefined || x.last).map(own),
    ];
  }

  private setFast(on: boolean): void {
    if (on === this.fast) return;
    this.fast = on;
    const { site } = this.d;
    const ids = [...site.byRole('grid-meter'), ...site.byRole('inverter')].map((d) => d.config.id);
    this.d.poller.pollFast(on ? new Set(ids) : null, FAST_POLL_MS);
  }

  /** Writes each command that moved past the deadband or whose keep-alive is due. */
  private async write(commands: readonly { id: string; command: PowerLimitCommand }[], force: boolean): Promise<void> {
    const now = this.d.clock.now();
    const writes: Promise<void>[] = [];
    for (const { id, command } of commands) {
      const x = this.inverters.find((y) => y.device.config.id === id);
      const limit = x?.limit;
      if (!x || !limit) continue;
      // a clean stop waits for the write on its way, then writes its own
      if (force) await x.writing;
      else if (x.writing) continue;
      const keepAliveMs = limit.revert.kind === 'none' ? Number.POSITIVE_INFINITY : (limit.revert.seconds * 1000) / 3;
      const last = x.last;
      const moved =
        !last ||
        last.command.kind !== command.kind ||
        (last.command.kind === 'limit' &&
          command.kind === 'limit' &&
          Math.abs(last.command.watts - command.watts) > DEADBAND * x.ratedW);
      // a device that reverts to its fail-safe needs the keep-alive even while unlimited
      const due = last !== null && now - last.at >= keepAliveMs && (command.kind === 'limit' || x.failSafeWritten);
      if (!force && !moved && !due) continue;
      writes.push(
        this.lane(x, async () => {
          const done = await limit.apply(x.bus, command);
          const refused = done.find((w) => w.values.some((v, i) => w.readBack[i] !== v));
          if (refused)
            this.d.log.warn(
              { device: id, address: refused.address, wrote: refused.values, readBack: refused.readBack },
              'limits: the inverter did not take the limit',
            );
          x.last = { command, at: now };
        }),
      );
    }
    // the step does not wait for them (each inverter has its own lane); a clean stop does
    if (force) await Promise.all(writes);
  }

  /**
   * Runs one write to an inverter in its lane. A failure is logged once until a write works, and
   * the fail-safe is written again after it: a device that stopped answering may have restarted
   * without its reversion values.
   */
  private lane(x: Inverter, write: () => Promise<void>): Promise<void> {
    const id = x.device.config.id;
    const run = write()
      .then(() => {
        if (x.failing) this.d.log.info({ device: id }, 'limits: the inverter takes its limit again');
        x.failing = false;
      })
      .catch((err: unknown) => {
        if (!x.failing)
          this.d.log.warn({ err, device: id }, 'limits: writing the inverter’s limit failed; tried again');
        x.failing = true;
        x.failSafeWritten = false;
      })
      .finally(() => {
        x.writing = null;
      });
    x.writing = run;
    return run;
  }

  private registerMetrics(): void {
    const registry = this.d.registry;
    if (!registry) return;
    const self = this;
    this.gauge = new Gauge({
      name: LIMIT_METRIC,
      help: 'The site limit in force, W, by limit (exportW, importW, generationW) and its source',
      labelNames: ['limit', 'source'],
      registers: [registry],
      collect() {
        this.reset();
        const f = self.last?.inForce ?? self.inForce();
        for (const n of LIMIT_NAMES) {
          const v = f[n];
          if (v) this.set({ limit: n, source: v.source }, v.watts);
        }
      },
    });
    // what the inverters together may deliver now; the power held back is bounded by status.ts
    new Gauge({
      name: CAP_METRIC,
      help: 'The most AC power the inverters together may deliver now under the site limits, W; absent while unlimited',
      registers: [registry],
      collect() {
        this.reset();
        const cap = self.last?.capW;
        if (cap !== null && cap !== undefined) this.set(Math.round(cap));
      },
    });
    new Gauge({
      name: CURTAILED_METRIC,
      help: 'The inverters’ AC output the site limits hold back now, W, at most: their rating less the cap while they deliver the cap, 0 while they deliver less (docs/limits.md)',
      registers: [registry],
      collect() {
        this.set(self.status().curtailedW);
      },
    });
  }
}
