/**
 * One warn line per refused request or connection, naming the client's address, so an installer
 * can tell which LAN host is knocking. A flood must not fill the SD card through this log, so the
 * lines are bounded: a burst of `burst`, then one per `refillMs`; what is not logged meanwhile
 * is counted and reported with the next line. The address is the socket's peer: sitegw trusts no
 * X-Forwarded-For, as nothing stands between it and the LAN.
 */
import type { Logger } from 'pino';

export interface Refusal {
  /** the peer address of the connection */
  remote: string | undefined;
  /** 401, 403, 429, 408 … or 'connection' for a socket refused before any request */
  statusCode: number | 'connection';
  reason?: string;
  method?: string;
  path?: string;
}

export interface RefusalLogOptions {
  burst?: number;
  refillMs?: number;
  now?: () => number;
}

export class RefusalLog {
  private tokens: number;
  private last: number;
  private suppressed = 0;
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly now: () => number;

  constructor(
    private readonly log: Logger,
    opts: RefusalLogOptions = {},
  ) {
    this.burst = opts.burst ?? 10;
    this.refillMs = opts.refillMs ?? 6000;
    this.now = opts.now ?? Date.now;
    this.tokens = this.burst;
    this.last = this.now();
  }

  note(r: Refusal): void {
    const now = this.now();
    const refilled = Math.floor((now - this.last) / this.refillMs);
    if (refilled > 0) {
      this.tokens = Math.min(this.burst, this.tokens + refilled);
      // a full bucket does not save up refills for later
      this.last = this.tokens === this.burst ? now : this.last + refilled * this.refillMs;
    }
    if (this.tokens === 0) {
      if (this.suppressed++ === 0) {
        this.log.warn({ burst: this.burst, everyMs: this.refillMs }, 'refusals come faster than they are logged: further ones are counted and the count logged with the next line');
      }
      return;
    }
    this.tokens--;
    const notLogged = this.suppressed;
    this.suppressed = 0;
    this.log.warn({ ...r, ...(notLogged > 0 ? { notLogged } : {}) }, 'refused');
  }
}
