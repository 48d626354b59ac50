/**
 * Whether the kernel's clock is NTP-synchronised, as the clock rules ask it
 * (core/time-labels.ts, docs/design.md "Field faults: what the numbers survive"): a forward step that is NTP's first
 * synchronisation after boot is trusted at once; any other waits to be confirmed.
 *
 * Read without a native dependency, from what a Pi has: systemd-timesyncd's flag file
 * (/run/systemd/timesync/synchronized, touched at every synchronisation), else timedated's view
 * of adjtimex (`timedatectl show -p NTPSynchronized`), else chrony's (`chronyc -n tracking`, the
 * leap status). Refreshed in the background every REFRESH_MS; the answer is the latest, null
 * when nothing could say.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Feature } from '../core/feature.js';

export const TIMESYNCD_FLAG = '/run/systemd/timesync/synchronized';
const REFRESH_MS = 15_000;
const COMMAND_TIMEOUT_MS = 3_000;

export class KernelTimeSync implements Feature {
  readonly name = 'time sync';
  private value: boolean | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  /** which source answered last, for health */
  source: 'timesyncd' | 'timedatectl' | 'chronyc' | null = null;

  constructor(private readonly flagFile = TIMESYNCD_FLAG) {}

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** the latest answer: true synchronised, false not, null unknown */
  synchronised(): boolean | null {
    // the flag file is cheap to look at: read at every look, so a first sync is seen at once
    const flag = this.flag();
    if (flag !== null) return flag;
    return this.value;
  }

  private flag(): boolean | null {
    if (existsSync(this.flagFile)) return true;
    // timesyncd runs (its directory exists) and has not synchronised yet
    return existsSync(dirname(this.flagFile)) ? false : null;
  }

  private async refresh(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      if (this.flag() !== null) {
        this.source = 'timesyncd';
        return;
      }
      const td = await run('timedatectl', ['show', '-p', 'NTPSynchronized', '--value']);
      if (td === 'yes' || td === 'no') {
        this.value = td === 'yes';
        this.source = 'timedatectl';
        return;
      }
      const ch = await run('chronyc', ['-n', 'tracking']);
      const leap = ch ? /Leap status\s*:\s*(.+)/.exec(ch)?.[1]?.trim() : undefined;
      if (leap) {
        this.value = leap !== 'Not synchronised';
        this.source = 'chronyc';
        return;
      }
      this.value = null;
      this.source = null;
    } finally {
      this.running = false;
    }
  }
}

/** A command's trimmed output, or null when it is missing, fails or takes too long. */
function run(cmd: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: COMMAND_TIMEOUT_MS, env: childEnv() }, (err, stdout) =>
      resolve(err ? null : String(stdout).trim()),
    );
  });
}

/**
 * The environment without systemd's notify socket: a systemd tool that fails tells the socket
 * it inherits `ERRNO=…`, which systemd would take as the daemon's own (seen: `timedatectl`
 * without D-Bus sent ERRNO=112 ahead of sitegw's READY=1).
 */
function childEnv(): NodeJS.ProcessEnv {
  const { NOTIFY_SOCKET: _n, WATCHDOG_USEC: _w, WATCHDOG_PID: _p, ...env } = process.env;
  return env;
}
