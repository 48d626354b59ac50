/**
 * The daemon's health in words an installer understands, and the narrower "is the main loop
 * alive" that feeds the systemd watchdog.
 *
 * The main loop is healthy when
 * - the poll scheduler ticked recently (three ticks on the daemon's clock, plus 10 s of real
 *   time for a slow Pi, or the watchdog period when that is shorter),
 * - device polls finish (answered or not) within three of the longest poll period plus 30 s:
 *   a scheduler that ticks while every poll hangs polls nothing, and
 * - the last write to the database (bucket close) did not fail.
 * Every "how long since" is measured on the monotonic clock: a wall-clock step neither hides a
 * stuck loop nor makes a healthy one look stuck (docs/design.md "Field faults: what the numbers survive").
 * A blocked event loop needs no check of its own: the watchdog timer runs on the same loop, so
 * a loop that is stuck sends no ping at all. Devices that do not answer or an uplink that is
 * down (the problems each feature's health() reports) make the daemon `degraded`, not
 * unhealthy: restarting would not help them.
 */
import type { Clock } from '../core/clock.js';
import type { FeatureList } from '../core/feature.js';
import type { Site } from '../site/site.js';

export type HealthStatus = 'ok' | 'degraded' | 'failing';

export interface HealthReport {
  status: HealthStatus;
  uptimeSeconds: number;
  /** what is wrong, one sentence each, no site data (device ids and values stay out) */
  problems: string[];
  /** what the daemon trusts for time now (core/time-labels.ts), one sentence */
  clock?: string;
}

export interface HealthSources {
  clock: Clock;
  site: Site;
  /**
   * the poll scheduler: when it last ticked and when a device poll last finished (monotonic
   * clock, ms; null before one), its tick and the longest device period
   */
  scheduler: {
    readonly lastTickAt: number | null;
    readonly tickMs: number;
    readonly lastPollDoneAt?: number | null;
    readonly longestPeriodMs?: number;
  };
  /** the wall clock's steps and why readings are not labelled now (core/time-labels.ts) */
  timeLabels?: { problems(): string[]; trust?(): string };
  /** the running features: what each reports as a problem (an uplink not connected) */
  features?: Pick<FeatureList, 'problems'>;
  /** real monotonic ms, for the uptime (tests move it) */
  now?: () => number;
  /** real ms of grace on top of three ticks (default 10 s; never more than the watchdog period) */
  tickSlackMs?: number;
  /** real ms of grace on top of three of the longest poll periods before polling counts as stuck (default 30 s) */
  progressSlackMs?: number;
  /**
   * the sentence with the path and errno for a failed write that comes without one (ops/data-disk.ts):
   * every writer's failure reads the same, whichever of them noted it last
   */
  describeWrite?: (err: unknown) => string;
}

/** real ms of grace on top of three ticks before the scheduler counts as stuck */
export const TICK_SLACK_MS = 10_000;
/**
 * real ms of grace before polling counts as stuck: a device poll waits for Modbus timeouts in real
 * time (not sped up with the demo's clock), a first poll discovers the register map
 */
export const PROGRESS_SLACK_MS = 30_000;

export class Health {
  private readonly startedAt: number;
  /** monotonic clock ms at start: polls are due to finish from here on */
  private readonly startedMono: number;
  private lastWriteError: string | null = null;
  private readonly notes: string[] = [];

  constructor(private readonly src: HealthSources) {
    this.startedAt = this.now();
    this.startedMono = src.clock.mono();
  }

  private now(): number {
    return (this.src.now ?? (() => performance.now()))();
  }

  /**
   * The outcome of the last database write (a bucket close, a token, a grid event, the storage
   * probe); `described` is the sentence with the path and errno (ops/data-disk.ts) when the
   * writer has one, else `describeWrite` makes it.
   */
  noteWrite(err?: unknown, described?: string): void {
    if (err === undefined) {
      this.lastWriteError = null;
      return;
    }
    this.lastWriteError =
      described ?? this.src.describeWrite?.(err) ?? (err instanceof Error ? err.message : String(err));
  }

  /** Whether the last database write failed. */
  get writeFailing(): boolean {
    return this.lastWriteError !== null;
  }

  /** Something that happened at start and stays worth telling (e.g. a damaged database replaced). */
  noteAtStart(sentence: string): void {
    this.notes.push(sentence);
  }

  /** Why the main loop is not healthy; empty when it is. */
  mainLoopProblems(): string[] {
    const out: string[] = [];
    const { clock, scheduler } = this.src;
    const last = scheduler.lastTickAt;
    const slack = this.src.tickSlackMs ?? TICK_SLACK_MS;
    const allowedMs = (3 * scheduler.tickMs) / clock.speed + slack;
    const mono = clock.mono();
    if (last === null) out.push('the poll scheduler has not started');
    else {
      const realSince = (mono - last) / clock.speed;
      if (realSince > allowedMs) out.push(`the poll scheduler has not run for ${Math.round(realSince / 1000)} s`);
      else if (scheduler.lastPollDoneAt !== undefined) {
        const since = (mono - (scheduler.lastPollDoneAt ?? this.startedMono)) / clock.speed;
        const period = scheduler.longestPeriodMs ?? scheduler.tickMs;
        if (since > (3 * period) / clock.speed + (this.src.progressSlackMs ?? PROGRESS_SLACK_MS))
          out.push(`no device poll has finished for ${Math.round(since / 1000)} s: polling is stuck`);
      }
    }
    if (this.lastWriteError !== null) out.push(`writing to the database failed: ${this.lastWriteError}`);
    return out;
  }

  mainLoopHealthy(): boolean {
    return this.mainLoopProblems().length === 0;
  }

  report(): HealthReport {
    const problems = [...this.mainLoopProblems()];
    const failing = problems.length > 0;
    const devices = [...this.src.site.devices.values()];
    const down = devices.filter((d) => !d.online);
    if (down.length > 0) {
      const kinds = new Map<string, number>();
      for (const d of down) {
        const kind = d.lastError ? d.lastError.split(':')[0]! : 'not polled yet';
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }
      const why = [...kinds].map(([k, n]) => `${k}: ${n}`).join(', ');
      problems.push(`${down.length} of ${devices.length} devices not answering (${why})`);
    }
    if (this.src.timeLabels) problems.push(...this.src.timeLabels.problems());
    if (this.src.features) problems.push(...this.src.features.problems());
    problems.push(...this.notes);
    return {
      status: failing ? 'failing' : problems.length > 0 ? 'degraded' : 'ok',
      uptimeSeconds: Math.round((this.now() - this.startedAt) / 1000),
      problems,
      ...(this.src.timeLabels?.trust ? { clock: this.src.timeLabels.trust() } : {}),
    };
  }

  /** One line for systemd's STATUS= and the log. */
  summary(): string {
    const r = this.report();
    const devices = [...this.src.site.devices.values()];
    const online = devices.filter((d) => d.online).length;
    const head = `${r.status}: ${online}/${devices.length} devices online`;
    return r.problems.length > 0 ? `${head}; ${r.problems[0]}` : head;
  }
}
