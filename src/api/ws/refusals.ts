import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';

/** The client's address as the socket sees it (no proxy sits in front of the gateway). */
export function remoteOf(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}

/**
 * Refused and failed upgrades in the log with the client's address, at most `perWindow` lines per
 * window: a host that loops bad upgrades must not fill the journal (an SD card on a Pi). What is
 * left out is counted and the count rides on the next line that goes out.
 */
export class UpgradeLog {
  private windowStart = Number.NEGATIVE_INFINITY;
  private inWindow = 0;
  private suppressed = 0;

  constructor(
    private readonly log: Logger,
    private readonly perWindow = 20,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  note(level: 'info' | 'error', fields: Record<string, unknown>, msg: string): void {
    const t = this.now();
    if (t - this.windowStart >= this.windowMs) {
      this.windowStart = t;
      this.inWindow = 0;
    }
    if (this.inWindow >= this.perWindow) {
      this.suppressed++;
      return;
    }
    this.inWindow++;
    const left = this.suppressed;
    this.suppressed = 0;
    this.log[level](left > 0 ? { ...fields, notLogged: left } : fields, msg);
  }
}
