/**
 * The API port's connections: what each one holds (requests in flight, answer bytes not yet
 * taken, a WebSocket) and who gets a slot when the port is full (docs/security.md "Admission when the port is full").
 *
 * node's own `server.maxConnections` closes the newcomer, unanswered, whoever holds the slots:
 * four hosts with idle sockets kept a partner out for good (issue 26). Here, when the port or an
 * address is full, a connection that gives way is chosen instead:
 * - only a connection with no complete request in flight and no WebSocket gives way: one that
 *   has not completed a request yet (a slowloris, a socket opened and left), or one idle between
 *   keep-alive requests; an answer being worked on or a stream being served is never cut;
 * - from the address holding the most connections (the newcomer's address counted with it),
 *   and there a connection that has not completed a request before an idle one, the oldest first;
 * - when none may give way, the newcomer is refused with a 503 (plain HTTP only: on a TLS port
 *   nothing can be written before the handshake, so it is closed).
 * A hostile address reconnecting as fast as it can thus only takes slots from itself or from
 * the other addresses holding as many, and a partner's few connections stay.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { errorBody } from '../../core/errors.js';
import { STATUS_CODES } from '../../core/node-http.js';
import type { RefusalLog } from '../refusals.js';

export interface AdmissionLimits {
  maxConnections: number;
  maxConnectionsPerAddress: number;
}

/** One open connection of the port. */
export class Conn {
  /** answers being worked on or waiting behind earlier ones (pipelining) */
  readonly open = new Set<ServerResponse>();
  /** answers written completely */
  served = 0;
  upgraded = false;
  /** the stream HTTP writes to (the TLS socket on an HTTPS port), set by its first request */
  http: Duplex | null = null;
  /** a newest request still arriving (its body) */
  last: IncomingMessage | null = null;
  readonly since = Date.now();

  constructor(
    readonly socket: Socket,
    readonly addr: string,
    readonly key: string,
  ) {}

  /** fair game when the port is full: nothing complete is being answered, no WebSocket */
  get yields(): boolean {
    if (this.upgraded) return false;
    if (this.open.size === 0) return true;
    return this.served === 0 && this.open.size === 1 && this.last !== null && !this.last.complete;
  }

  /** answer bytes written but not yet taken by the peer (queued behind earlier answers included) */
  get unsent(): number {
    let n = this.http?.writableLength ?? 0;
    for (const res of this.open) if (!res.socket) n += res.writableLength;
    return n;
  }
}

/** `address×count` of the addresses holding the most, for the refusal log. */
function topHolders(counts: Map<string, number>, n = 8): string {
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([a, c]) => `${a}×${c}`)
    .join(', ');
}

/** A 503 with the error body on a socket HTTP has not answered on yet, then the close. */
function busy(socket: Socket, plainHttp: boolean, message: string): void {
  if (!plainHttp || socket.destroyed) {
    socket.destroy();
    return;
  }
  const json = JSON.stringify(errorBody(503, 'SERVER_BUSY', message));
  socket.end(
    `HTTP/1.1 503 ${STATUS_CODES[503]}\r\nContent-Type: application/json; charset=utf-8\r\nRetry-After: 1\r\n` +
      `Connection: close\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
    () => socket.destroy(),
  );
  // a peer that does not take even that is not waited for
  setTimeout(() => socket.destroy(), 2000).unref();
}

export class Connections {
  private readonly conns = new Map<string, Conn>();
  private readonly perAddress = new Map<string, number>();

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly refusals: RefusalLog,
    /** a plain-HTTP port, where a refused connection can still be answered */
    private readonly plainHttp: boolean,
  ) {}

  /** Admits every new connection of `server` by the policy above, and keeps its state. */
  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.admit(socket));
    // before the WebSocket server takes the socket: from now on it is a stream, not a request
    server.prependListener('upgrade', (req: IncomingMessage) => {
      const c = this.of(req);
      if (c) c.upgraded = true;
    });
  }

  /** The connection a request came on (undefined for fastify's inject, which has none). */
  of(req: IncomingMessage): Conn | undefined {
    const key = keyOf(req.socket);
    const c = key === null ? undefined : this.conns.get(key);
    if (c && !c.http) c.http = req.socket;
    return c;
  }

  all(): IterableIterator<Conn> {
    return this.conns.values();
  }

  private admit(socket: Socket): void {
    const addr = socket.remoteAddress ?? '';
    const key = keyOf(socket);
    if (key === null) {
      socket.destroy();
      return;
    }
    const { maxConnections, maxConnectionsPerAddress } = this.limits;
    if ((this.perAddress.get(addr) ?? 0) >= maxConnectionsPerAddress) {
      const victim = this.pick([...this.conns.values()].filter((c) => c.addr === addr));
      const reason = `limits.http.maxConnectionsPerAddress (${maxConnectionsPerAddress}) reached`;
      if (!victim) {
        this.refuse(socket, addr, reason, { [addr]: this.perAddress.get(addr) ?? 0 });
        return;
      }
      this.evict(victim, `${reason}: its own idle connection gives way`);
    }
    if (this.conns.size >= maxConnections) {
      const victim = this.pick([...this.conns.values()], addr);
      const reason = `limits.http.maxConnections (${maxConnections}) reached`;
      if (!victim) {
        this.refuse(socket, addr, reason, this.perAddress);
        return;
      }
      this.evict(victim, `${reason}: a connection of the address holding the most gives way`, this.perAddress);
    }
    const c = new Conn(socket, addr, key);
    this.conns.set(key, c);
    this.perAddress.set(addr, (this.perAddress.get(addr) ?? 0) + 1);
    // unless it was forgotten already when it gave way
    socket.once('close', () => this.conns.get(key) === c && this.forget(c));
  }

  /** The connection to give way, or null: see the policy at the top. */
  private pick(candidates: Conn[], newcomer?: string): Conn | null {
    let best: Conn | null = null;
    let bestRank: number[] = [];
    for (const c of candidates) {
      if (!c.yields) continue;
      const held = (this.perAddress.get(c.addr) ?? 0) + (c.addr === newcomer ? 1 : 0);
      const rank = [held, c.served === 0 ? 1 : 0, -c.since];
      if (!best || compare(rank, bestRank) > 0) {
        best = c;
        bestRank = rank;
      }
    }
    return best;
  }

  private evict(c: Conn, reason: string, holders?: Map<string, number>): void {
    this.refusals.note({
      remote: c.addr,
      statusCode: 'connection',
      reason,
      ...(holders ? { holders: topHolders(holders) } : {}),
    });
    this.forget(c);
    // an idle keep-alive socket is simply closed, as its keep-alive timeout would; one that has
    // not been answered yet is told why
    if (c.served > 0 || c.open.size > 0 || !this.plainHttp) c.socket.destroy();
    else busy(c.socket, this.plainHttp, 'the gateway has no free connection slot; retry');
  }

  private refuse(socket: Socket, addr: string, reason: string, holders: Map<string, number> | object): void {
    const counts = holders instanceof Map ? holders : new Map(Object.entries(holders));
    this.refusals.note({ remote: addr, statusCode: 'connection', reason, holders: topHolders(counts) });
    busy(socket, this.plainHttp, `${reason}; retry later`);
  }

  private forget(c: Conn): void {
    this.conns.delete(c.key);
    const left = (this.perAddress.get(c.addr) ?? 1) - 1;
    if (left > 0) this.perAddress.set(c.addr, left);
    else this.perAddress.delete(c.addr);
  }
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** The connection's identity, the same for the TCP socket and the TLS socket over it. */
function keyOf(s: Duplex): string | null {
  const { remoteAddress, remotePort } = s as Socket;
  return remoteAddress && remotePort ? `${remoteAddress}|${remotePort}` : null;
}
