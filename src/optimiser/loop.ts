/**
 * The daemon's optimiser loop (docs/optimiser.md "The daemon's loop"): at every quarter hour of
 * the site's clock, and at once when a storage system's mode becomes `optimise`, a case from the
 * gateway's own data (site-case.ts), solved, and handed to control as a plan from `optimiser`.
 * A partner's or the customer's plan wins while it still has a slot to run; a case that cannot be
 * built or solved removes the optimiser's plan, so the executor falls back to self-consumption.
 */
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { SiteConfig } from '../config/types.js';
import { type Control, OPTIMISER_SOURCE } from '../control/control.js';
import type { Clock, ClockTimer } from '../core/clock.js';
import type { EventBus } from '../core/events.js';
import type { Feature, FeatureHealth } from '../core/feature.js';
import { streamIds } from '../core/streams.js';
import type { SiteLimits } from '../limits/sources.js';
import type { DeviceState, Site } from '../site/site.js';
import { bucketColumns } from '../store/buckets.js';
import { deletePlan, planOf } from '../store/control.js';
import { isStorageFault } from '../store/storage-faults.js';
import { findStreamKey } from '../store/streams.js';
import { sitePrices } from '../tariffs/site-prices.js';
import { parseCase } from './case.js';
import { type History, LOAD_SPREAD, type PvSite } from './forecast.js';
import { slotBodies } from './plan.js';
import { type PlanChart, planChart } from './plan-chart.js';
import { policyPasses } from './policy.js';
import { planFromPolicy } from './policy-plan.js';
import { HORIZON_SLOTS, SLOT_MS, siteCase } from './site-case.js';
import { InfeasibleCaseError, solve } from './solve.js';

/** as far back as the load's spread reaches (forecast.ts LOAD_SPREAD; the day-type mean takes 4 weeks of it) */
const HISTORY_MS = LOAD_SPREAD.weeks * 7 * 86_400_000;
/**
 * The site's config says where the array is, not how it faces: the learned per-slot ratio
 * (forecast.ts) takes up the orientation, so a south-facing 30° plane is only its reference.
 */
const REFERENCE_PLANE = { tiltDeg: 30, azimuthFromSouthDeg: 0 };

export interface OptimiserLoopDeps {
  config: SiteConfig;
  site: Site;
  db: Database;
  clock: Clock;
  bus: EventBus;
  log: Logger;
  control: Control;
  /** the site's limits (limits/feature.ts), which the plan keeps to and curtails for */
  limits?: () => SiteLimits | undefined;
}

/** What the last run did for one storage system: the status page's and health's view. */
export interface LoopOutcome {
  atMs: number;
  /**
   * 'planned', 'waiting' (another source's plan runs), 'infeasible' (solved: no plan meets the
   * case), 'failed' (no case) or 'unstored' (planned, but the data disk refused the plan: the
   * plan stored before runs on)
   */
  result: 'planned' | 'waiting' | 'infeasible' | 'failed' | 'unstored';
  detail: string;
}

export class OptimiserLoop implements Feature {
  readonly name = 'optimiser';
  private timer: ClockTimer | null = null;
  private readonly soc = new Map<string, number>();
  private readonly outcomes = new Map<string, LoopOutcome>();
  /** the plan each storage system runs on now, with the prices and forecasts it was made from */
  private readonly charts = new Map<string, PlanChart>();
  private unsubscribe: (() => void) | null = null;
  /** the data disk refused the last plan: said once in the log, not at every quarter hour */
  private refused = false;
  /** storage systems being planned now, and whether a wake came during it (one more run then) */
  private readonly running = new Map<string, boolean>();
  private readonly inflight = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly d: OptimiserLoopDeps) {}

  start(): void {
    const { control, bus } = this.d;
    if (!control.enabled) return;
    this.stopped = false;
    const storages = new Map(this.storages().map((s) => [streamIds.batteryAggregate(s.config.id), s.config.id]));
    this.unsubscribe = bus.on('reading', (r) => {
      const id = storages.get(r.streamId);
      if (id === undefined || r.values.soc === undefined) return;
      const first = !this.soc.has(id);
      this.soc.set(id, r.values.soc);
      // the first reading since start, or since `optimise` was chosen before it and failed for
      // want of it: plan now rather than at the next quarter hour (runOne does nothing unless
      // the battery is in `optimise`)
      if (first) this.wake(id);
    });
    control.attachOptimiser({ wake: (id) => this.wake(id) });
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.d.control.attachOptimiser(undefined);
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.timer) this.d.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  health(): FeatureHealth {
    const problems = [...this.outcomes]
      .filter(([, o]) => o.result === 'failed' || o.result === 'infeasible' || o.result === 'unstored')
      .map(([id, o]) =>
        o.result === 'unstored'
          ? `the optimiser could not store its plan for ${id} (the data disk takes no writes): the plan stored before runs on`
          : `the optimiser could not plan for ${id} (${o.result === 'infeasible' ? 'the case is infeasible' : 'no case could be built'}): self-consumption until it can`,
      );
    return problems.length === 0 ? {} : { problems };
  }

  /** The last run's outcome per storage system. */
  outcome(deviceId: string): LoopOutcome | undefined {
    return this.outcomes.get(deviceId);
  }

  /**
   * The status page's chart data: the optimiser's plan for each storage system whose stored plan
   * is still the one the loop made (a partner's plan, or none, draws nothing).
   */
  planCharts(): PlanChart[] {
    const out: PlanChart[] = [];
    for (const [id, chart] of this.charts) {
      const stored = planOf(this.d.db, id);
      if (this.d.control.modeOf(id) === 'optimise' && stored?.source === OPTIMISER_SOURCE) out.push(chart);
    }
    return out;
  }

  /** at the next quarter hour of the site's clock, every storage system in `optimise` */
  private schedule(): void {
    const now = this.d.clock.now();
    const next = Math.floor(now / SLOT_MS) * SLOT_MS + SLOT_MS;
    this.timer = this.d.clock.setTimeout(() => {
      for (const s of this.storages()) this.wake(s.config.id);
      this.schedule();
    }, next - now);
  }

  private storages(): DeviceState[] {
    return this.d.site.byRole('inverter').filter((x) => this.d.control.isStorage(x));
  }

  /**
   * Plans for one storage system now, or once more after the run under way: a run takes a
   * second or more on a Pi (policy.ts), and a timer, a reading and a mode change may all ask.
   */
  wake(deviceId: string): void {
    if (this.running.has(deviceId)) {
      this.running.set(deviceId, true);
      return;
    }
    this.running.set(deviceId, false);
    const run = this.runOne(deviceId)
      .catch((err) => this.d.log.error({ deviceId, err }, 'the optimiser run failed'))
      .finally(() => {
        this.inflight.delete(run);
        const again = this.running.get(deviceId);
        this.running.delete(deviceId);
        if (again && !this.stopped) this.wake(deviceId);
      });
    this.inflight.add(run);
  }

  /** when every run asked for so far, and each one asked for during it, has ended (the tests' wait) */
  async settled(): Promise<void> {
    while (this.inflight.size > 0) await Promise.all([...this.inflight]);
  }

  /**
   * One storage system's plan now; never rejects (a failure is logged, shown in health, and leaves
   * self-consumption): it runs from a timer, a reading's listener and a mode change.
   */
  private async runOne(deviceId: string): Promise<void> {
    const { db, clock, log } = this.d;
    const now = clock.now();
    const device = this.d.site.devices.get(deviceId);
    // control's view: an owner's release that waits for the disk (control/waiting-release.ts) is self-consumption
    if (!device || this.d.control.modeOf(deviceId) !== 'optimise') return;
    if (this.othersPlanRuns(deviceId, now)) return;
    try {
      const built = this.build(device, now);
      if ('none' in built) throw new Error(built.none);
      // the envelope (site.yaml) may make a case the solver must not take: said like a bad input file
      const c = parseCase(built.case);
      // the modes the device's control gives: a device without hold (Huawei, Victron) is planned without it
      const modes = this.d.control.slotModesOf(deviceId);
      // a case no plan can meet on its forecast (a load the envelope leaves uncovered) is refused by
      // name, as `sitegw optimise` refuses it: the policy alone would price it and plan on
      solve(c);
      const passes = policyPasses(c, built.spread);
      let pass = passes.next();
      while (!pass.done) {
        await new Promise((resolve) => setImmediate(resolve));
        if (this.stopped) return;
        pass = passes.next();
      }
      // the mode may have changed, or another source's plan come, while it was solved
      if (this.d.control.modeOf(deviceId) !== 'optimise' || this.othersPlanRuns(deviceId, clock.now())) return;
      const plan = planFromPolicy(c, pass.value, built.spread, modes);
      const slots = slotBodies(plan.slots, modes);
      this.d.control.putPlan(device, slots, OPTIMISER_SOURCE);
      this.charts.set(deviceId, planChart(deviceId, now, c, plan));
      const detail = `${slots.length} slots, cost ${plan.cost} against ${plan.baselineCost} in self-consumption`;
      this.outcomes.set(deviceId, { atMs: now, result: 'planned', detail });
      log.info({ deviceId, slots: slots.length, cost: plan.cost, baselineCost: plan.baselineCost }, 'optimiser plan');
      if (this.refused) log.info({ deviceId }, 'storing the optimiser plan works again');
      this.refused = false;
    } catch (err) {
      if (isStorageFault(err)) {
        // a full or failing data disk (docs/design.md "Field faults: what the numbers survive"): the
        // plan stored before, made a quarter hour ago, runs on (its chart stays); tried again at the next
        this.outcomes.set(deviceId, {
          atMs: now,
          result: 'unstored',
          detail: `the data disk refused the plan (${(err as { code: string }).code})`,
        });
        if (!this.refused)
          log.error(
            { deviceId, err },
            'storing the optimiser plan failed (the data disk takes no writes): the plan stored before runs on; tried again every quarter hour',
          );
        this.refused = true;
        return;
      }
      const detail = err instanceof Error ? err.message : String(err);
      this.charts.delete(deviceId);
      // its own old plan would run on forecasts and prices it can no longer stand behind; on a
      // disk that refuses the delete too it runs on, with the reason in health
      try {
        if (planOf(db, deviceId)?.source === OPTIMISER_SOURCE) deletePlan(db, deviceId);
      } catch (delErr) {
        if (!isStorageFault(delErr)) throw delErr;
      }
      const result = err instanceof InfeasibleCaseError ? 'infeasible' : 'failed';
      this.outcomes.set(deviceId, { atMs: now, result, detail });
      log.warn({ deviceId, reason: detail }, 'optimiser could not plan: the battery is in self-consumption');
    }
  }

  /** a partner's or the cloud's plan with a slot still to run wins: the outcome says so */
  private othersPlanRuns(deviceId: string, now: number): boolean {
    const stored = planOf(this.d.db, deviceId);
    if (!stored || stored.source === OPTIMISER_SOURCE || !stored.slots.some((s) => s.endMs > now)) return false;
    this.outcomes.set(deviceId, {
      atMs: now,
      result: 'waiting',
      detail: `the plan from ${stored.source} runs until it ends`,
    });
    return true;
  }

  private build(device: DeviceState, now: number) {
    const { config, db, site } = this.d;
    const id = device.config.id;
    const socPct = this.soc.get(id);
    if (socPct === undefined) return { none: 'no state of charge read yet' };
    const start = Math.floor(now / SLOT_MS) * SLOT_MS;
    const prices = sitePrices(db, config, { start, end: start + HORIZON_SLOTS * SLOT_MS });
    const blocks = site.batteriesOf(id).map((b) => b.capacityWh);
    const capacityWh = blocks.every((c) => c !== undefined) ? blocks.reduce((a, b) => a + b, 0) : 0;
    const house = site.byRole('consumption-meter')[0];
    const houseStream = house ? streamIds.consumptionMeter(house.config.id) : streamIds.consumptionDerived(site.id);
    const { latitude, longitude } = config.site.location;
    const pvSite: PvSite = { latDeg: latitude, lonDeg: longitude, ...REFERENCE_PLANE, timezone: config.site.timezone };
    const siteLimits = this.d.limits?.();
    return siteCase({
      now,
      // the reserve in force: Home Assistant or the owner may have moved it from site.yaml's
      envelope: { ...config.control, reserveSoc: this.d.control.reserveOf(id) },
      capacityWh,
      socPct,
      prices,
      pvSite,
      // a PV array's power_W is negative while it produces (the spec: energy direction is the
      // device's), the forecast wants production as a positive number
      pvHistory: this.history(streamIds.pvAggregate(id), start, -1),
      loadHistory: this.history(houseStream, start),
      limits: siteLimits ? (a, b) => siteLimits.over(a, b) : undefined,
      negativeExportPrice: config.limits.negativeExportPrice,
    });
  }

  /** the stream's stored 15-minute mean power over HISTORY_MS; NaN where nothing is stored */
  private history(streamId: string, until: number, sign = 1): History {
    const from = until - HISTORY_MS;
    const values = new Array<number>(HISTORY_MS / SLOT_MS).fill(Number.NaN);
    const key = findStreamKey(this.d.db, streamId);
    if (key !== undefined) {
      for (const [startS, w] of bucketColumns(this.d.db, key, from / 1000, until / 1000, ['power_W'])) {
        const k = Math.round((startS * 1000 - from) / SLOT_MS);
        if (typeof w === 'number' && k >= 0 && k < values.length) values[k] = sign * w + 0;
      }
    }
    return { start: from, values };
  }
}
