/**
 * Feeds systemd's watchdog (WatchdogSec=) only while the main loop is healthy, so a daemon whose
 * poll scheduler is stuck or whose database writes fail is restarted by systemd. The check runs
 * on real time at a third of the watchdog period (sd_watchdog_enabled(3) advises half or less).
 */
import type { Logger } from 'pino';
import type { Health } from './health.js';
import { oneLine, type SdNotify } from './sd-notify.js';

export interface WatchdogOptions {
  notify: SdNotify;
  health: Health;
  log: Logger;
  /** systemd's watchdog period, ms (WATCHDOG_USEC); null = no watchdog, STATUS only */
  periodMs: number | null;
  /** how often STATUS is refreshed when there is no watchdog, ms */
  statusEveryMs?: number;
}

export class Watchdog {
  private timer: NodeJS.Timeout | null = null;
  private withheld = false;
  private lastStatus = '';
  /** pings sent since start (tests and metrics) */
  pings = 0;

  constructor(private readonly opts: WatchdogOptions) {}

  get intervalMs(): number {
    return this.opts.periodMs !== null ? Math.max(50, this.opts.periodMs / 3) : (this.opts.statusEveryMs ?? 30_000);
  }

  start(): void {
    if (!this.opts.notify.enabled || this.timer) return;
    this.timer = setInterval(() => this.check(), this.intervalMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One round: ping when healthy, otherwise say why not (once per change). */
  check(): void {
    const { health, notify, log } = this.opts;
    const problems = health.mainLoopProblems();
    if (problems.length > 0) {
      const why = oneLine(`watchdog withheld: ${problems.join('; ')}`);
      if (!this.withheld || why !== this.lastStatus) {
        log.error(
          { problems },
          'main loop unhealthy: the systemd watchdog is no longer fed, systemd restarts the daemon when it expires',
        );
        notify.notify({ STATUS: why });
        this.lastStatus = why;
      }
      this.withheld = true;
      return;
    }
    if (this.withheld) log.info('main loop healthy again: feeding the watchdog');
    this.withheld = false;
    const status = oneLine(health.summary());
    const fields: Record<string, string> = {};
    if (this.opts.periodMs !== null) fields.WATCHDOG = '1';
    if (status !== this.lastStatus) fields.STATUS = status;
    this.lastStatus = status;
    if (Object.keys(fields).length === 0) return;
    notify.notify(fields);
    if (fields.WATCHDOG) this.pings++;
  }
}
