/**
 * One warn line per refused request, connection or WebSocket upgrade, naming the client's address,
 * so an installer can tell which LAN host is knocking. HTTP and WebSocket share one instance (the
 * composition root makes it), so a host that alternates between them meets one bound: a flood
 * must not fill the SD card through this log, so the lines are bounded: a burst of `burst`, then
 * one per `refillMs`; what is not logged meanwhile is counted and reported with the next line.
 * A flood of one kind must not hide another from the installer (a stolen token's WebSockets
 * refused by the hundred, while the same hosts fill the port): a kind of refusal not logged for
 * `kindEveryMs` is logged even when the bucket is empty, which adds at most one line per kind
 * per `kindEveryMs`. The
 * address is the socket's peer: sitegw trusts no X-Forwarded-For, as nothing stands between it
 * and the LAN.
 */
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';

/** The client's address as the socket sees it (no proxy sits in front of the gateway). */
export function remoteOf(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}

export interface Refusal {
  /** the peer address of the connection */
  remote: string | undefined;
  /** 401, 403, 429, 408 … or 'connection' for a socket refused before any request */
  statusCode: number | 'connection';
  reason?: string;
  /** the error code of the answer's body, where it has one */
  code?: unknown;
  method?: string;
  path?: string;
  /** a WebSocket upgrade, refused before it became one */
  upgrade?: true;
  /** the addresses holding the most of what ran out (connections, unsent answer bytes): `address×count, …` */
  holders?: string;
}

export interface RefusalLogOptions {
  burst?: number;
  refillMs?: number;
  kindEveryMs?: number;
  now?: () => number;
}

/** kinds remembered at most: they come from the code's own reasons and codes, so a few dozen */
const KINDS_KEPT = 64;

/** What one refusal is, for the per-kind rule: its status and the setting or code behind it, without counts. */
function kindOf(
  level: string,
  fields: { statusCode?: unknown; reason?: unknown; code?: unknown },
  msg: string,
): string {
  const reason = typeof fields.reason === 'string' ? fields.reason.split(/ \(|:/)[0] : '';
  return `${level}|${msg}|${String(fields.statusCode ?? '')}|${reason}|${String(fields.code ?? '')}`;
}

export class RefusalLog {
  private tokens: number;
  private last: number;
  private suppressed = 0;
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly kindEveryMs: number;
  private readonly now: () => number;
  /** when each kind was last written, oldest first */
  private readonly kindLast = new Map<string, number>();

  constructor(
    private readonly log: Logger,
    opts: RefusalLogOptions = {},
  ) {
    this.burst = opts.burst ?? 10;
    this.refillMs = opts.refillMs ?? 6000;
    this.kindEveryMs = opts.kindEveryMs ?? 600_000;
    this.now = opts.now ?? Date.now;
    this.tokens = this.burst;
    this.last = this.now();
  }

  note(r: Refusal): void {
    this.line('warn', r, 'refused');
  }

  /**
   * A request the gateway failed to handle (a fault, not the client's mistake): at error level,
   * but inside the same bound, as a client that can trigger it can trigger it in a loop.
   */
  fault(fields: { remote: string | undefined; err: unknown; [k: string]: unknown }, msg: string): void {
    this.line('error', fields, msg);
  }

  private line(level: 'warn' | 'error', fields: object, msg: string): void {
    const now = this.now();
    const kind = kindOf(level, fields, msg);
    const kindLast = this.kindLast.get(kind);
    const novel = kindLast === undefined || now - kindLast >= this.kindEveryMs;
    const refilled = Math.floor((now - this.last) / this.refillMs);
    if (refilled > 0) {
      this.tokens = Math.min(this.burst, this.tokens + refilled);
      // a full bucket does not save up refills for later
      this.last = this.tokens === this.burst ? now : this.last + refilled * this.refillMs;
    }
    if (this.tokens === 0 && !novel) {
      if (this.suppressed++ === 0) {
        this.log.warn(
          { burst: this.burst, everyMs: this.refillMs },
          'refusals come faster than they are logged: further ones are counted and the count logged with the next line',
        );
      }
      return;
    }
    if (this.tokens > 0) this.tokens--;
    this.kindLast.delete(kind);
    this.kindLast.set(kind, now);
    if (this.kindLast.size > KINDS_KEPT) this.kindLast.delete(this.kindLast.keys().next().value!);
    const notLogged = this.suppressed;
    this.suppressed = 0;
    this.log[level]({ ...fields, ...(notLogged > 0 ? { notLogged } : {}) }, msg);
  }
}
