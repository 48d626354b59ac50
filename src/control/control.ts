/**
 * Battery control as a feature (docs/design.md "Control: operation mode and plans"): the
 * operation mode and plan of each storage system (an inverter with batteries behind it), what the
 * API asks of them, and one executor per storage system. With `control.enabled: false` nothing is
 * started and every change is refused with 409 CONTROL_DISABLED: no write reaches any device.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { ControlConfig } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { apiError } from '../core/errors.js';
import type { EventBus } from '../core/events.js';
import type { Feature } from '../core/feature.js';
import type { StorageControl } from '../core/storage-control.js';
import { streamIds } from '../core/streams.js';
import type { DeviceState, Site } from '../site/site.js';
import {
  deletePlan,
  measuredMeanPower,
  modeOf,
  type OperationMode,
  type PlanRequestRow,
  planOf,
  planRequestOf,
  recordPlanRequest,
  replacePlan,
  reserveOf,
  type SlotMode,
  type StoredPlan,
  type StoredSlot,
  setMode,
  setReserve,
} from '../store/control.js';
import { writeTx } from '../store/db.js';
import type { SiteGridLimits } from './decide.js';
import { type ControlBus, StorageExecutor } from './executor.js';
import { checkPlanSlots, OPTIMISER_SOURCE, PLAN_HORIZON_MS, SLOT_MODES, type SlotBody } from './plan-body.js';
import { WaitingRelease } from './waiting-release.js';

export const OPERATION_MODES: readonly OperationMode[] = ['self-consumption', 'plan', 'backup', 'optimise'];

export interface ControlDeps {
  config: ControlConfig;
  site: Site;
  db: Database;
  clock: Clock;
  bus: EventBus;
  log: Logger;
  /** the device's bus, with writes */
  busFor: (device: DeviceState) => ControlBus;
  /** the device's storage control, found on its bus */
  controlFor: (device: DeviceState, bus: ControlBus) => Promise<StorageControl | undefined>;
  registry?: Registry;
  /** site ms between decisions when no slot boundary comes sooner; below the keep-alive period */
  tickMs: number;
  /** the site's import and export limits in force (src/limits/), which every command is clipped to as well */
  siteLimits?: () => SiteGridLimits;
}

/**
 * A plan as the API shows it: the stored plan with each past slot's measured mean battery power
 * and the share of the slot the measurement covers (below 1 when the gateway or the battery's
 * readings were away for part of it: the mean is over the time seen).
 */
export interface PlanView extends StoredPlan {
  etag: string;
  measured: ({ meanW: number; coverage: number } | undefined)[];
}

export interface ControlStatus {
  enabled: boolean;
  storages: {
    deviceId: string;
    mode: OperationMode;
    slot: { start: string; end: string; mode: string; powerW: number | null; status: string } | null;
    /** the command in force, as the executor last put it (JSON) */
    command: string | null;
  }[];
}

export const planEtag = (planId: string) => `"${planId}"`;

/** The gateway's optimiser as control sees it (src/optimiser/loop.ts): control never imports it. */
export interface OptimiserHook {
  /** plan this storage system now (its mode just became `optimise`) */
  wake(deviceId: string): void;
}

export { OPTIMISER_SOURCE } from './plan-body.js';

/** a meter's and an inverter's readings this close are one poll's: a poll of the fast limit loop is 1 s apart */
const SAME_POLL_MS = 250;

export class Control implements Feature {
  readonly name = 'control';
  private readonly executors = new Map<string, StorageExecutor>();
  private readonly unsubscribe: (() => void)[] = [];
  private optimiser: OptimiserHook | undefined;

  /** the owner's release while the disk refuses storing it */
  private readonly release: WaitingRelease;

  constructor(private readonly d: ControlDeps) {
    this.release = new WaitingRelease(d);
  }

  get enabled(): boolean {
    return this.d.config.enabled;
  }

  /** The storage system a path id names: an inverter with batteries, or any of its sensors or blocks. */
  storageOf(id: string): DeviceState | undefined {
    const { site } = this.d;
    const deviceId = site.devices.has(id) ? id : site.stream(id)?.deviceId;
    const device = deviceId === undefined ? undefined : site.devices.get(deviceId);
    if (!device) return undefined;
    if (device.config.role === 'battery') {
      const inv = device.config.inverter ?? site.byRole('inverter')[0]?.config.id;
      return inv === undefined ? undefined : site.devices.get(inv);
    }
    return device;
  }

  isStorage(device: DeviceState): boolean {
    return device.config.role === 'inverter' && this.d.site.batteriesOf(device.config.id).length > 0;
  }

  /**
   * The slot modes a plan for this storage system may hold: the device's storage control's
   * commands and self-consumption (always: it writes nothing of its own, or the device's default).
   * All four until the executor has found the device's control (SunSpec 124 gives all four).
   */
  slotModesOf(deviceId: string): readonly SlotMode[] {
    const modes = this.executors.get(deviceId)?.storageControl?.modes;
    return modes ? SLOT_MODES.filter((m) => m === 'self-consumption' || modes.includes(m)) : SLOT_MODES;
  }

  /** Every storage system of the site. */
  storages(): DeviceState[] {
    return this.d.site.byRole('inverter').filter((d) => this.isStorage(d));
  }

  modeOf(deviceId: string): OperationMode {
    if (this.release.waits(deviceId)) return 'self-consumption';
    return modeOf(this.d.db, deviceId)?.mode ?? 'self-consumption';
  }

  setMode(device: DeviceState, mode: OperationMode, by: string): void {
    this.requireEnabled();
    this.release.requireStored();
    if (mode === 'optimise' && !this.optimiser)
      throw apiError(
        'OPTIMISER_UNAVAILABLE',
        "operationMode 'optimise' needs the gateway's optimiser, which is not running; use 'plan' with a plan of your own, or 'self-consumption'",
      );
    const id = device.config.id;
    // one transaction: a disk that took the mode and refused the plan's removal would leave a
    // half change behind the 503
    writeTx(this.d.db, () => {
      setMode(this.d.db, id, mode, by, this.d.clock.now());
      // the optimiser's plan is for `optimise` only: another mode must not follow it later
      if (mode !== 'optimise' && planOf(this.d.db, id)?.source === OPTIMISER_SOURCE) deletePlan(this.d.db, id);
    });
    this.d.log.info({ deviceId: id, mode, by }, 'operation mode changed');
    if (mode === 'optimise') this.optimiser?.wake(id);
    void this.executors.get(id)?.wake();
  }

  /**
   * The reserve state of charge a storage system may set (docs/control.md "The reserve"): within
   * site.yaml's control.socMin..socMax and above the lowest the device itself keeps.
   */
  reserveRange(deviceId: string): { min: number; max: number } {
    const { socMin, socMax } = this.d.config;
    const device = this.executors.get(deviceId)?.storageControl?.minSocPct ?? 0;
    return { min: Math.min(socMax, Math.max(socMin, device)), max: socMax };
  }

  /** The reserve in force, percent: the one set at run time, else control.reserveSoc, clipped to its range. */
  reserveOf(deviceId: string): number {
    const { min, max } = this.reserveRange(deviceId);
    const soc = reserveOf(this.d.db, deviceId)?.soc ?? this.d.config.reserveSoc;
    return Math.min(max, Math.max(min, soc));
  }

  /** Stores a new reserve; anything but a number within reserveRange() is refused and nothing changes. */
  setReserve(device: DeviceState, soc: unknown, by: string): number {
    this.requireEnabled();
    this.release.requireStored();
    const id = device.config.id;
    const { min, max } = this.reserveRange(id);
    if (typeof soc !== 'number' || !Number.isFinite(soc))
      throw apiError('RESERVE_INVALID', `reserveSoc must be a number of percent, got ${String(soc).slice(0, 40)}`);
    if (soc < min || soc > max)
      throw apiError(
        'RESERVE_OUT_OF_RANGE',
        `reserveSoc ${soc} is outside ${min}..${max} % (control.socMin, control.socMax and the device's own minimum)`,
      );
    setReserve(this.d.db, id, soc, by, this.d.clock.now());
    this.d.log.info({ deviceId: id, reserveSoc: soc, by }, 'reserve state of charge changed');
    void this.executors.get(id)?.wake();
    return soc;
  }

  /** The optimiser feature says it runs (or, with undefined, that it stopped): `optimise` is accepted while it does. */
  attachOptimiser(o: OptimiserHook | undefined): void {
    this.optimiser = o;
  }

  plan(device: DeviceState): PlanView | undefined {
    if (this.release.waits(device.config.id)) return undefined;
    const p = planOf(this.d.db, device.config.id);
    if (!p) return undefined;
    const now = this.d.clock.now();
    const stream = streamIds.batteryAggregate(device.config.id);
    return {
      ...p,
      etag: planEtag(p.planId),
      measured: p.slots.map((s) => {
        const m = s.endMs <= now ? measuredMeanPower(this.d.db, stream, s.startMs, s.endMs) : undefined;
        return m && { meanW: m.meanW, coverage: Math.min(1, m.coveredMs / (s.endMs - s.startMs)) };
      }),
    };
  }

  /**
   * What a cloud command's requestId did, if the gateway acted on it within the plan horizon (7
   * days: after that every slot it could have had has ended, and a copy is refused SLOT_IN_PAST).
   */
  planRequest(requestId: string): PlanRequestRow | undefined {
    return planRequestOf(this.d.db, requestId);
  }

  /**
   * Stores a plan whole (If-Match checked by the caller against plan()); a plan switches
   * self-consumption to `plan`. `requestId`: the cloud command's, recorded with the plan.
   */
  putPlan(
    device: DeviceState,
    slots: readonly SlotBody[],
    source: string,
    ifMatch?: string,
    requestId?: string,
  ): PlanView {
    this.requireEnabled();
    this.release.requireStored();
    const id = device.config.id;
    const now = this.d.clock.now();
    const before = planOf(this.d.db, id);
    if (ifMatch !== undefined && ifMatch !== '*' && (!before || planEtag(before.planId) !== ifMatch.trim()))
      throw apiError(
        'PLAN_CHANGED',
        `If-Match ${ifMatch.slice(0, 80)} is not the stored plan's ETag: GET the plan again`,
      );
    // the optimiser's plan starts at the quarter hour its solve began in: a solve that crossed the
    // next one (a loaded Pi, a reading-triggered run just before it) would be refused whole for its
    // first slot (SLOT_IN_PAST), its own old plan deleted, and the battery left in self-consumption
    const checked = checkPlanSlots(slots, now, source === OPTIMISER_SOURCE);
    this.requireModes(id, checked);
    // one transaction: the plan and the mode it switches to, or neither
    writeTx(this.d.db, () => {
      const planId = randomUUID();
      replacePlan(this.d.db, { deviceId: id, planId, source, createdMs: now, slots: checked });
      if (this.modeOf(id) === 'self-consumption') setMode(this.d.db, id, 'plan', source, now);
      if (requestId !== undefined) this.recordRequest(requestId, id, planId);
    });
    this.d.log.info({ deviceId: id, source, slots: checked.length }, 'plan stored');
    void this.executors.get(id)?.wake();
    return this.plan(device)!;
  }

  /**
   * Allowed with control off too: removing a plan can only make the device do less. A storage
   * system in `plan` goes back to `self-consumption` (the reverse of putPlan): nothing is left
   * to follow; `backup` and `optimise` stay, the optimiser making its next plan.
   */
  deletePlan(device: DeviceState, requestId?: string, by = 'plan removed'): boolean {
    this.release.requireStored();
    const id = device.config.id;
    const gone = writeTx(this.d.db, () => {
      const g = deletePlan(this.d.db, id);
      if (this.modeOf(id) === 'plan') setMode(this.d.db, id, 'self-consumption', by, this.d.clock.now());
      if (requestId !== undefined) this.recordRequest(requestId, id, null);
      return g;
    });
    void this.executors.get(device.config.id)?.wake();
    return gone;
  }

  private recordRequest(requestId: string, deviceId: string, planId: string | null): void {
    const now = this.d.clock.now();
    recordPlanRequest(this.d.db, requestId, { deviceId, planId, atMs: now }, now - PLAN_HORIZON_MS);
  }

  /** Each storage system's mode, current slot and command in force: the status page's section. */
  status(): ControlStatus {
    const now = this.d.clock.now();
    const storages = this.storages().map((d) => {
      const id = d.config.id;
      const slot = this.release.waits(id)
        ? undefined
        : planOf(this.d.db, id)?.slots.find((s) => s.startMs <= now && now < s.endMs);
      return {
        deviceId: id,
        mode: this.modeOf(id),
        slot: slot
          ? {
              start: new Date(slot.startMs).toISOString(),
              end: new Date(slot.endMs).toISOString(),
              mode: slot.mode,
              powerW: slot.powerW,
              status: slot.status,
            }
          : null,
        command: this.executors.get(id)?.current ?? null,
      };
    });
    return { enabled: this.enabled, storages };
  }

  /**
   * The owner's button on the status page: every storage system to self-consumption and its
   * plan removed; wins over every plan (docs/design.md "who may write").
   */
  releaseAll(by: string): void {
    if (!this.enabled) return;
    // in force at once, stored when the disk takes it (waiting-release.ts)
    this.release.release(
      this.storages().map((d) => d.config.id),
      by,
    );
    for (const d of this.storages()) void this.executors.get(d.config.id)?.wake();
    this.d.log.info({ by }, 'every storage system back to self-consumption');
  }

  async start(): Promise<void> {
    if (!this.enabled) return;
    const { site, bus, registry } = this.d;
    const writes =
      registry &&
      new Counter({
        name: 'sitegw_control_register_writes_total',
        help: 'Registers control wrote to a storage device, a write of several registers counting each (in dry-run: would have written)',
        labelNames: ['device'],
        registers: [registry],
      });
    for (const device of this.storages()) {
      const b = this.d.busFor(device);
      const exec = new StorageExecutor({
        deviceId: device.config.id,
        db: this.d.db,
        clock: this.d.clock,
        log: this.d.log,
        env: this.d.config,
        bus: b,
        control: () => this.d.controlFor(device, b),
        counted: (n) => writes?.inc({ device: device.config.id }, n),
        tickMs: this.d.tickMs,
        reserveSoc: () => this.reserveOf(device.config.id),
        released: () => this.release.holds(device.config.id),
        siteLimits: this.d.siteLimits,
        gridMeter: site.byRole('grid-meter').length > 0,
      });
      this.executors.set(device.config.id, exec);
    }
    const gridMeter = site.byRole('grid-meter')[0];
    const gridStream = gridMeter && streamIds.gridMeter(gridMeter.config.id);
    // one poll's readings of the meter and of the inverter, taken on their own buses moments apart
    // (the demo's meters and inverter are two servers: equal times never came, and a backup charge
    // never woke, test/e2e/control-reserve), but never a reading of the poll before
    const samePoll = (other: number | undefined, ts: number) =>
      other !== undefined && Math.abs(other - ts) < SAME_POLL_MS;
    this.unsubscribe.push(
      bus.on('reading', (r) => {
        // a charge watches the import limit at every poll, not only at the tick: once the grid's
        // and the battery's readings of one poll are both in, so the site without the battery
        // (grid − battery) is never a new grid reading less an old battery one
        if (r.streamId === gridStream && r.values.power_W !== undefined) {
          for (const e of this.executors.values()) {
            e.measured.gridW = r.values.power_W;
            e.readAt.grid = r.ts;
            if (e.current?.includes('"charge"') && samePoll(e.readAt.battery, r.ts)) void e.wake();
          }
          return;
        }
        for (const [id, e] of this.executors) {
          if (r.streamId !== streamIds.batteryAggregate(id)) continue;
          if (r.values.soc !== undefined) e.measured.socPct = r.values.soc;
          if (r.values.power_W !== undefined) {
            e.measured.batteryW = r.values.power_W;
            e.readAt.battery = r.ts;
            if (e.current?.includes('"charge"') && samePoll(e.readAt.grid, r.ts)) void e.wake();
          }
        }
      }),
    );
    // a start restores the current slot, or self-consumption, before anything else
    await Promise.all([...this.executors.values()].map((e) => e.wake()));
  }

  async stop(): Promise<void> {
    for (const u of this.unsubscribe.splice(0)) u();
    // a clean stop leaves every storage system in its own self-consumption
    await Promise.all([...this.executors.values()].map((e) => e.stop(true)));
    this.executors.clear();
  }

  /**
   * A slot the device's control cannot run is refused now, not failed later: Huawei's and
   * Victron's documents give no hold (docs/control.md "Vendor control maps"). Known once the
   * executor has found the device's control (at start); before that the executor's own check
   * fails the slot and falls back to self-consumption.
   */
  private requireModes(deviceId: string, slots: readonly StoredSlot[]): void {
    const modes = this.slotModesOf(deviceId);
    const i = slots.findIndex((s) => !modes.includes(s.mode));
    if (i < 0) return;
    throw apiError(
      'SLOT_MODE_UNSUPPORTED',
      `the slot at ${new Date(slots[i]!.startMs).toISOString()}: ${deviceId}'s storage control gives no '${slots[i]!.mode}' (it gives ${modes.join(', ')}); plan the battery with those`,
    );
  }

  private requireEnabled(): void {
    if (!this.enabled)
      throw apiError(
        'CONTROL_DISABLED',
        'battery control is off on this gateway: the installer enables it with control.enabled: true in site.yaml after the checks in docs/control.md',
      );
  }
}
