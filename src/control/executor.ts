/**
 * The executor of one storage system (docs/control.md "How it works"): at every slot boundary,
 * every tick and every grid reading during a charge it decides what the battery should do
 * (decide.ts), and puts it on the device through the storage-control capability only when the
 * command changes or the command's life needs a keep-alive. Every write is read back and
 * audited (a record the full disk refuses waits in memory: write-audit.ts); any failure of the
 * device falls back to self-consumption and marks the slot failed.
 */
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { ControlConfig } from '../config/types.js';
import { Retry } from '../core/backoff.js';
import type { Clock, ClockTimer } from '../core/clock.js';
import type { RegisterReader } from '../core/register-reader.js';
import type { RegisterWrite, RegisterWriter, StorageCommand, StorageControl } from '../core/storage-control.js';
import {
  modeOf,
  type OperationMode,
  planOf,
  type SlotStatus,
  type StoredSlot,
  setSlotStatus,
} from '../store/control.js';
import { isStorageFault } from '../store/storage-faults.js';
import { type Decision, decide, type Measured, type SiteGridLimits } from './decide.js';
import { dryRunBus } from './dry-run-bus.js';
import { restoreOriginals } from './originals.js';
import { originalsBus } from './originals-bus.js';
import { OPTIMISER_SOURCE } from './plan-body.js';
import { WriteAuditLog } from './write-audit.js';

export type ControlBus = RegisterReader & RegisterWriter;

export interface ExecutorDeps {
  deviceId: string;
  db: Database;
  clock: Clock;
  log: Logger;
  env: ControlConfig;
  bus: ControlBus;
  /** finds the device's storage control (SunSpec 124, a profile's control map); undefined when it has none */
  control: () => Promise<StorageControl | undefined>;
  /** registers written (or that would have been, in dry-run), for /metrics */
  counted: (registers: number) => void;
  /** site ms between decisions when nothing else wakes the executor */
  tickMs: number;
  /** the reserve state of charge in force, percent (control.ts reserveOf) */
  reserveSoc: () => number;
  /** the owner released control while the disk refused storing it: self-consumption, no plan (waiting-release.ts) */
  released?: () => boolean;
  /** the site's import and export limits in force (src/limits/): charges shed first for the import limit */
  siteLimits?: () => SiteGridLimits;
  /** the site has a grid meter: charge and discharge slots keep the grid limits by its power */
  gridMeter: boolean;
}

/** how a slot's note begins while it waits for a measurement (cleared once it runs) */
const WAITING = 'waiting for ';

const SLOT_END_STATUS: Partial<Record<SlotStatus, SlotStatus>> = { pending: 'skipped', active: 'done' };

/**
 * After a look for the device's storage control that found the device offering none, the next
 * waits from a tick, doubling, to this (site ms). Each look reads the device (SunSpec's model
 * chain), twice a step with the fallback's, and said so in the log at every tick: a site naming a
 * battery whose inverter has no storage control filled the journal on the card. Not found, the
 * battery is in its own self-consumption, which is what control falls back to anyway. A look that
 * failed (the device did not answer) is made again at the next step as before: the device may be
 * back any moment, and the bus's unit backoff (modbus/unit-backoff.ts) bounds what a silent one
 * costs.
 */
const LOOK_AGAIN_MOST_MS = 300_000;

/** The device offered no storage control at the last look, and the wait after it is not over. */
class NoStorageControl extends Error {
  constructor(deviceId: string) {
    super(`device ${deviceId} offers no storage control`);
    this.name = 'NoStorageControl';
  }
}

export class StorageExecutor {
  readonly measured: Measured = {};
  /** the poll time of the grid's and the battery's last readings */
  readonly readAt: { grid?: number; battery?: number } = {};
  private control: StorageControl | undefined;
  private last: { key: string; at: number; writer: string } | null = null;
  private timer: ClockTimer | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  /** the slot whose targetSoc was reached (its start) */
  private reachedSlot: number | null = null;
  /** the reserve kept the battery from discharging at the last decision */
  private reserveHeld = false;
  private readonly bus: ControlBus;

  private readonly audits: WriteAuditLog;
  private slotStatusFailing = false;
  /** the looks in a row that found the device offering no storage control, and when (mono) the next may be */
  private readonly looks: Retry;

  constructor(private readonly d: ExecutorDeps) {
    this.looks = new Retry(d.tickMs, LOOK_AGAIN_MOST_MS, () => d.clock.mono());
    this.audits = new WriteAuditLog({ db: d.db, log: d.log, deviceId: d.deviceId });
    this.bus = d.env.dryRun ? dryRunBus(d.bus) : originalsBus(d.bus, d.db, d.deviceId, () => d.clock.now());
  }

  /** Decide and apply now, then again at the next slot boundary or tick. */
  wake(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.step().catch((err) => this.d.log.error({ err, deviceId: this.d.deviceId }, 'control step failed'));
      } while (this.again && !this.stopped);
      this.running = null;
      this.schedule();
    })();
    return this.running;
  }

  /** The command in force, for the device record and the status page. */
  get current(): string | null {
    return this.last?.key ?? null;
  }

  /** The device's storage control once found (its SoC floor, if it tells one). */
  get storageControl(): StorageControl | undefined {
    return this.control;
  }

  /** Stops deciding; `release` puts the device back in self-consumption (a clean stop). */
  async stop(release: boolean): Promise<void> {
    this.stopped = true;
    if (this.timer) this.d.clock.clearTimeout(this.timer);
    await this.running;
    // a stop looks once more whatever the wait: a command of an earlier life may still be on the device
    this.looks.dueNow();
    if (release) await this.put({ mode: 'self-consumption' }, 'stop', true).catch(() => undefined);
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.timer) this.d.clock.clearTimeout(this.timer);
    const now = this.d.clock.now();
    const plan = planOf(this.d.db, this.d.deviceId);
    const boundary = plan?.slots.flatMap((s) => [s.startMs, s.endMs]).find((t) => t > now);
    const tick = this.d.tickMs;
    const wait = boundary === undefined ? tick : Math.min(tick, boundary - now);
    this.timer = this.d.clock.setTimeout(() => void this.wake(), Math.max(1, wait));
  }

  private async step(): Promise<void> {
    const { db, deviceId, clock, env } = this.d;
    this.audits.flush();
    const now = clock.now();
    const released = this.d.released?.() ?? false;
    const mode: OperationMode = released ? 'self-consumption' : (modeOf(db, deviceId)?.mode ?? 'self-consumption');
    const plan = released ? undefined : planOf(db, deviceId);
    let slot: StoredSlot | undefined;
    for (const s of plan?.slots ?? []) {
      if (s.endMs <= now) {
        const next = SLOT_END_STATUS[s.status];
        if (next) this.markSlot(s.startMs, next, s.note);
      } else if (s.startMs <= now) slot = s;
    }
    const following = mode === 'plan' || mode === 'optimise';
    if (slot && !following && slot.status === 'pending') {
      this.markSlot(slot.startMs, 'skipped', `operation mode was ${mode}`);
      slot = undefined;
    }
    if (slot?.status === 'skipped' || slot?.status === 'failed') slot = undefined;
    const reached = slot !== undefined && this.reachedSlot === slot.startMs;
    const reserve = { socPct: this.d.reserveSoc(), held: this.reserveHeld };
    const holds = this.control?.modes?.includes('hold') ?? true;
    // the optimiser's charge slots store the real PV surplus beyond the planned power (docs/optimiser.md);
    // a grid setpoint's charge does that by itself, and raised to the surplus would import it
    const takeSurplus = plan?.source === OPTIMISER_SOURCE && this.control?.power !== 'grid-setpoint';
    const d = decide(
      following ? 'plan' : mode,
      slot,
      this.measured,
      env,
      { holds },
      reached,
      reserve,
      takeSurplus,
      this.d.siteLimits?.() ?? {},
    );
    if (slot && d.targetReached) this.reachedSlot = slot.startMs;
    this.reserveHeld = d.reserveHeld === true;
    const writer = following && slot ? (plan?.source ?? 'plan') : `mode:${mode}`;
    try {
      await this.put(d.command, writer, false);
    } catch (err) {
      if (err instanceof NoStorageControl) {
        // said in the log at the look; nothing to fall back with
        if (slot) this.markSlot(slot.startMs, 'failed', err.message);
        this.last = null;
        return;
      }
      this.d.log.warn({ err, deviceId }, 'storage command failed: falling back to self-consumption');
      if (slot) this.markSlot(slot.startMs, 'failed', `device write failed: ${String(err).slice(0, 200)}`);
      this.last = null;
      await this.put({ mode: 'self-consumption' }, 'fallback', true).catch(() => undefined);
      return;
    }
    if (slot) {
      const [status, note]: [SlotStatus, string | null] = d.waitingFor
        ? this.cannotRun(slot, d.waitingFor)
        : [
            d.limited ? 'limited' : slot.status === 'limited' ? 'limited' : 'active',
            d.limited ??
              (d.targetReached ? 'targetSoc reached: holding' : slot.note?.startsWith(WAITING) ? null : slot.note),
          ];
      if (status !== slot.status || note !== slot.note) this.markSlot(slot.startMs, status, note);
    }
  }

  /**
   * A slot that cannot move the battery now says why, rather than showing `active` while nothing
   * is written (issue 41): without a grid meter it never can (the grid limits are kept by its
   * power): failed; a measurement not read yet (start-up, a silent device) leaves it waiting.
   */
  private cannotRun(slot: StoredSlot, what: NonNullable<Decision['waitingFor']>): [SlotStatus, string] {
    if (what === 'grid power' && !this.d.gridMeter)
      return [
        'failed',
        'cannot run: the site has no grid meter, and a charge or discharge is kept within control.importLimitW and exportLimitW by its power; the battery stays in self-consumption',
      ];
    const source = what === 'grid power' ? "the grid meter's power" : `the battery's ${what}`;
    const why = `${WAITING}${source} (not read yet or the device does not answer); the battery stays in self-consumption`;
    return [slot.status === 'pending' ? 'pending' : slot.status, why];
  }

  /**
   * A slot's status is bookkeeping: a full disk that refuses it must not stop the decision that
   * follows (the device would keep a past slot's command until its own timer ran out). The status
   * is written at a later step, since the stored one stays behind.
   */
  private markSlot(startMs: number, status: SlotStatus, note: string | null): void {
    try {
      setSlotStatus(this.d.db, this.d.deviceId, startMs, status, note);
      this.slotStatusFailing = false;
    } catch (err) {
      if (!isStorageFault(err)) throw err;
      if (!this.slotStatusFailing)
        this.d.log.warn({ err, deviceId: this.d.deviceId }, 'slot status not stored; tried again at every step');
      this.slotStatusFailing = true;
    }
  }

  /** Applies `command` when it changed or its life needs a keep-alive; audits what was written. */
  private async put(command: StorageCommand, writer: string, force: boolean): Promise<void> {
    const key = JSON.stringify(command);
    const now = this.d.clock.now();
    const control = this.control ?? (await this.look());
    const keepAliveMs = (control.life.seconds * 1000) / 3;
    const due =
      force || this.last?.key !== key || (command.mode !== 'self-consumption' && now - this.last.at >= keepAliveMs);
    if (!due) return;
    let writes: RegisterWrite[] = [];
    try {
      writes = await control.apply(this.bus, command);
      if (command.mode === 'self-consumption' && !this.d.env.dryRun && control.restoredWithSelfConsumption?.length)
        writes.push(...(await this.restore(control, control.restoredWithSelfConsumption)));
    } finally {
      this.audit(writes, writer, now);
    }
    const refused = writes.find((w) => w.values.some((v, i) => w.readBack[i] !== v));
    if (refused)
      throw new Error(
        `register ${refused.address} read back ${refused.readBack.join(',')} after writing ${refused.values.join(',')}`,
      );
    this.last = { key, at: now, writer };
  }

  /** Looks for the device's storage control, unless the wait after the last failed look is not over. */
  private async look(): Promise<StorageControl> {
    const { deviceId } = this.d;
    if (this.looks.waitLeft() > 0) throw new NoStorageControl(deviceId);
    // a throw (the device did not answer) goes to the step's fallback, and the next step looks again
    const control = await this.d.control();
    // found, it is kept: no look follows
    if (control) return (this.control = control);
    const wait = this.looks.failed();
    const looks = this.looks.inARow;
    // said at the 1st, 2nd, 4th, 8th… look: the journal is on the card
    if ((looks & (looks - 1)) === 0)
      this.d.log.warn(
        { deviceId, looks },
        `control: the device offers no storage control (${looks} looks in a row); the battery stays in its own mode, looking again in ${Math.round(wait / 1000)} s`,
      );
    throw new NoStorageControl(deviceId);
  }

  /**
   * Back to self-consumption, the registers the control names (SunSpec 124's ChaGriSet) go back
   * to the device's own value too, from the originals on disk: a value read after a crash
   * mid-command would be the command's own. One the device keeps otherwise is logged;
   * self-consumption is in force either way.
   */
  private async restore(control: StorageControl, only: readonly number[]): Promise<RegisterWrite[]> {
    const r = await restoreOriginals(this.d.db, this.d.deviceId, this.d.bus, control, only);
    if (r.failed) this.d.log.warn({ deviceId: this.d.deviceId }, `control: restoring a setting failed: ${r.failed}`);
    return r.writes.map((w) => w.write);
  }

  private audit(writes: readonly RegisterWrite[], writer: string, at: number): void {
    if (writes.length === 0) return;
    this.d.counted(writes.reduce((n, w) => n + w.values.length, 0));
    this.audits.record(
      writes.map((w) => ({
        atMs: at,
        deviceId: this.d.deviceId,
        writer,
        address: w.address,
        values: w.values,
        readBack: w.readBack,
        dryRun: this.d.env.dryRun,
      })),
    );
  }
}
