import type { Logger } from 'pino';
import type { DeviceConfig } from '../config/types.js';
import type { Reading } from '../core/channels.js';
import type { Clock, ClockTimer } from '../core/clock.js';
import type { EventBus } from '../core/events.js';
import type { Feature } from '../core/feature.js';
import type { RegisterReader } from '../core/register-reader.js';
import { streamIds } from '../core/streams.js';
import type { Label, TimeLabels } from '../core/time-labels.js';
import { toModbusError } from '../modbus/errors.js';
import { createDriver, type DeviceDriver, type DevicePoll, type ProfileRegistry } from '../profiles/index.js';
import { identityChanged, liveChannelsOf, type Site } from '../site/site.js';
import { batteryAggregate, derivedConsumption } from './aggregate.js';

export interface PollerDeps {
  site: Site;
  bus: EventBus;
  clock: Clock;
  readerFor: (device: DeviceConfig) => RegisterReader;
  log: Logger;
  /** device profiles loaded at start; without it the shipped ones are used */
  profiles?: ProfileRegistry;
  /** whether the wall clock may label this tick's readings (without it, always) */
  labels?: TimeLabels;
}

/**
 * Polls every device once per poll period on the daemon's clock. Devices on different buses
 * are read concurrently; the bus itself serialises what shares a wire. Readings go out on the
 * event bus; aggregates (__bb_agg) are built from one cycle's blocks so they never mix ages.
 */
export class Poller implements Feature {
  readonly name = 'poller';
  private readonly devices = new Map<string, DeviceDriver>();
  /** when each device was last polled: monotonic ms when live, the stamped time in cycle() by hand */
  private readonly lastPolled = new Map<string, number>();
  /** devices whose poll has not finished yet */
  private readonly inFlight = new Set<string>();
  private readonly cycles = new Set<Promise<unknown>>();
  private timer: ClockTimer | null = null;
  private stopped = true;
  /** polls skipped because the device's previous poll was still running */
  overruns = 0;
  /** when the scheduler last ran (start or tick), monotonic clock ms: the watchdog's sign of life */
  lastTickAt: number | null = null;
  /** when a device poll last finished (answered or not; the start counts as one), monotonic ms */
  lastPollDoneAt: number | null = null;
  /** devices read faster than their own period, and how fast (the limits loop while a limit is in force) */
  private fast: { ids: ReadonlySet<string>; periodMs: number } | null = null;

  constructor(private readonly deps: PollerDeps) {}

  start(): void {
    this.stopped = false;
    // a fresh schedule: what cycle() was given by hand (history pre-fill) is on another time line
    this.lastPolled.clear();
    this.lastTickAt = this.deps.clock.mono();
    // progress is measured from the start: a device that never finishes a poll counts from here
    this.lastPollDoneAt = this.lastTickAt;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
    await Promise.all([...this.cycles]);
  }

  /** the longest poll period of any device, ms */
  get longestPeriodMs(): number {
    return Math.max(...this.deps.site.config.devices.map((d) => this.deps.site.pollPeriodMs(d.id)));
  }

  /** the tick: the shortest poll period of any device, so each device is polled on its own period */
  get tickMs(): number {
    return Math.min(...this.deps.site.config.devices.map((d) => this.periodOf(d.id)));
  }

  /**
   * Reads `ids` every `periodMs` (site ms) until called with null: the grid meter and the inverters
   * while a site limit is in force (src/limits/). The next tick already follows it.
   */
  pollFast(ids: ReadonlySet<string> | null, periodMs = 1000): void {
    const before = this.tickMs;
    this.fast = ids && ids.size > 0 ? { ids, periodMs } : null;
    if (!this.stopped && this.tickMs < before) {
      if (this.timer) this.deps.clock.clearTimeout(this.timer);
      this.schedule();
    }
  }

  private periodOf(id: string): number {
    const own = this.deps.site.pollPeriodMs(id);
    return this.fast?.ids.has(id) ? Math.min(own, this.fast.periodMs) : own;
  }

  private due(cfg: DeviceConfig, at: number): boolean {
    const last = this.lastPolled.get(cfg.id);
    // half a tick of slack: timers fire a little late or early on a busy Pi
    return last === undefined || at - last >= this.periodOf(cfg.id) - this.tickMs / 2;
  }

  private schedule(): void {
    if (this.stopped) return;
    const now = this.deps.clock.now();
    // aligned ticks: every reading of a cycle lands at the same phase of each bucket. The wait is
    // at most one tick whatever the wall clock did, so a step cannot stop the schedule
    const next = Math.floor(now / this.tickMs) * this.tickMs + this.tickMs;
    this.timer = this.deps.clock.setTimeout(() => this.tick(next), next - now);
  }

  private tick(scheduled: number): void {
    const { clock, labels } = this.deps;
    const mono = clock.mono();
    this.lastTickAt = mono;
    const wall = clock.now();
    // every reading of the cycle is stamped with the tick it belongs to, as history pre-fill
    // does: on a busy box the stamps stay one period apart and in order, and a relay change is
    // stamped within one period of the switch however late the answer came. After a wall-clock
    // step the tick planned before it is no time at all: the clock's own reading is taken
    const at = wall >= scheduled && wall - scheduled < this.tickMs ? scheduled : wall;
    const label: Label = labels ? labels.label(at) : { ok: true, at, held: false, epoch: 0 };
    // a cycle does not wait for the last one: a device still busy on a slow bus is skipped this
    // time, and devices on other buses are polled on time
    // a held label's readings wait for the devices' answers: a step undone meanwhile withdraws them
    const current = labels && label.ok && label.held ? () => labels.current(label) : undefined;
    const run = this.cycle(() => at, { dueAt: mono, record: label.ok, current }).catch((err: unknown) =>
      this.deps.log.error({ err }, 'poll cycle failed'),
    );
    this.cycles.add(run);
    void run.finally(() => this.cycles.delete(run));
    this.schedule();
  }

  /**
   * One poll of every due device; `now` is the time stamped on readings (the clock, or simulated
   * history). Each device's readings go out as soon as it has answered; an inverter's battery
   * aggregate once every block of this cycle has. `dueAt` is the time what is due is measured on
   * (the live schedule gives monotonic ms; by default the stamp); without `record` the devices
   * are polled and their readings are not published (the wall clock cannot label them); once
   * `current` says no (a held label withdrawn: core/time-labels.ts), answers still to come are not.
   */
  async cycle(
    now: () => number = () => this.deps.clock.now(),
    opts: { dueAt?: number; record?: boolean; current?: () => boolean } = {},
  ): Promise<Reading[]> {
    const { site } = this.deps;
    const at = now();
    const dueAt = opts.dueAt ?? at;
    const record = opts.record ?? true;
    const due = site.config.devices.filter((cfg) => this.due(cfg, dueAt));
    const ready = due.filter((cfg) => !this.inFlight.has(cfg.id));
    this.overruns += due.length - ready.length;
    const readings: Reading[] = [];
    const emit = (rs: readonly Reading[]) => {
      if (!record || (opts.current && !opts.current())) return;
      for (const r of rs) this.deps.bus.emit('reading', r);
      readings.push(...rs);
    };
    const polls = new Map<string, DevicePoll>();
    const tasks = new Map<string, Promise<void>>();
    for (const cfg of ready) {
      this.lastPolled.set(cfg.id, dueAt);
      this.inFlight.add(cfg.id);
      const task = this.pollDevice(cfg, now)
        .catch((err: unknown) => {
          // a driver bug must not stop the device from being polled again
          this.deps.log.error({ err, device: cfg.id }, 'poll failed unexpectedly');
          return null;
        })
        .then((poll) => {
          this.inFlight.delete(cfg.id);
          this.lastPollDoneAt = this.deps.clock.mono();
          if (poll) {
            polls.set(cfg.id, poll);
            emit(poll.readings);
          } else if (cfg.role === 'grid-meter') {
            // a silent meter means the relay state is unknown, not whatever it was last
            emit([{ streamId: streamIds.gridMeter(cfg.id), ts: now(), values: { state: 'unknown' } }]);
          }
        });
      tasks.set(cfg.id, task);
    }
    const aggregates = site.byRole('inverter').map(async (inv) => {
      await Promise.all(site.batteriesOf(inv.config.id).map((b) => tasks.get(b.config.id)));
      const agg = batteryAggregate(site, inv.config.id, polls);
      if (agg) emit([agg]);
    });
    const sources = site.derivedConsumptionSources();
    if (sources) {
      aggregates.push(
        (async () => {
          await Promise.all([sources.gridMeter, ...sources.inverters].map((d) => tasks.get(d.config.id)));
          const house = derivedConsumption(site, polls);
          if (house) emit([house]);
        })(),
      );
    }
    await Promise.all([...tasks.values(), ...aggregates]);
    return readings;
  }

  private async pollDevice(cfg: DeviceConfig, now: () => number): Promise<DevicePoll | null> {
    const { site, log } = this.deps;
    let dev = this.devices.get(cfg.id);
    if (!dev) {
      dev = createDriver(cfg, this.deps.profiles);
      this.devices.set(cfg.id, dev);
    }
    const wasOnline = site.devices.get(cfg.id)?.online ?? false;
    const began = performance.now();
    const polled = (ok: boolean) =>
      this.deps.bus.emit('devicePolled', { deviceId: cfg.id, ms: performance.now() - began, ok });
    try {
      const poll = await dev.poll(this.deps.readerFor(cfg), now);
      polled(true);
      const before = site.devices.get(cfg.id)?.identity ?? {};
      const replaced = identityChanged(before, dev.identity);
      if (replaced) {
        // another device answers at this address: its identity and register map were read anew
        // (dev.reset() at the failure before), its counters are judged as a replacement
        log.warn(
          { device: cfg.id, before, after: dev.identity },
          'device replaced: another serial or model after reconnecting; register map read again',
        );
      }
      const changed = site.learn(cfg.id, {
        identity: dev.identity,
        capacityWh: poll.capacityWh,
        pvModules: poll.pvModules,
        live: liveChannelsOf(poll.readings),
      });
      site.markOnline(cfg.id, now());
      if (!wasOnline) {
        log.info({ device: cfg.id, ...dev.identity }, 'device online');
        this.deps.bus.emit('deviceHealth', { deviceId: cfg.id, online: true, lastSeen: now() });
      }
      // announced like a change of streams: Home Assistant's device block and the uplink's topology carry the identity
      if (changed || replaced) this.deps.bus.emit('streamsChanged', { deviceId: cfg.id });
      return poll;
    } catch (err) {
      polled(false);
      const e = toModbusError(err);
      // after a lost connection the device may come back as another one (replaced, new firmware),
      // and after an exception or a decode failure its register map may have changed: its identity
      // and register map are read again at the next contact (docs/design.md "Field faults: what the numbers survive"). A
      // timeout alone (a busy device or bus) keeps them: rediscovery costs a dozen requests
      if (e.kind === 'connection' || e.kind === 'exception' || e.kind === 'decode') dev.reset();
      const before = site.devices.get(cfg.id)?.lastError;
      site.markFailed(cfg.id, e);
      if (wasOnline || before === null) {
        log.warn({ device: cfg.id, kind: e.kind, error: e.message }, 'device not answering');
        this.deps.bus.emit('deviceHealth', {
          deviceId: cfg.id,
          online: false,
          lastSeen: site.devices.get(cfg.id)?.lastSeen ?? null,
          error: `${e.kind}: ${e.message}`,
        });
      }
      return null;
    }
  }
}
