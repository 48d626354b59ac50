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
import { answerRaw } from '../raw-answer.js';
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

  /** gone: its socket is destroyed, whatever event told (or did not tell) the table */
  get gone(): boolean {
    return this.socket.destroyed;
  }

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
  answerRaw(socket, 503, errorBody(503, 'SERVER_BUSY', message), { 'Retry-After': '1' });
}

/** How often the table is checked against the sockets (reconcile): a slot never outlives its socket by more. */
const RECONCILE_MS = 1000;

/** What the table holds, for /metrics and the invariant harness (test/attack/admission-invariants). */
export interface SlotStats {
  /** slots counted */
  slots: number;
  /** of those, the ones whose socket node still has open */
  sockets: number;
  /** upgraded connections (WebSockets) among the slots */
  upgraded: number;
  /** slots by address, as admission counts them */
  perAddress: ReadonlyMap<string, number>;
}

export class Connections {
  private readonly conns = new Map<string, Conn>();
  private readonly perAddress = new Map<string, number>();
  private reconciler: NodeJS.Timeout | null = null;
  private closing = false;

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
    server.prependListener('upgrade', (req: IncomingMessage, socket: Duplex) => {
      const c = this.of(req);
      if (c) c.upgraded = true;
      // this listener alone counts for node as the upgrade being taken: with no WebSocket server
      // listening (stopping, or an inject-only app) nobody would ever end the socket
      if (server.listenerCount('upgrade') <= 1 || this.closing) socket.destroy();
    });
    server.once('close', () => this.stopReconciling());
    this.reconciler = setInterval(() => this.reconcile(), RECONCILE_MS);
    this.reconciler.unref();
  }

  /**
   * Forgets every slot whose socket is gone. A socket's 'close' forgets its slot already; this
   * catches whatever path destroyed a socket without that event reaching the table, so the slot
   * count can never stay above the sockets the server has.
   */
  reconcile(): number {
    let n = 0;
    for (const c of this.conns.values())
      if (c.gone) {
        this.forget(c);
        n++;
      }
    return n;
  }

  stats(): SlotStats {
    let sockets = 0;
    let upgraded = 0;
    for (const c of this.conns.values()) {
      if (!c.gone) sockets++;
      if (c.upgraded) upgraded++;
    }
    return { slots: this.conns.size, sockets, upgraded, perAddress: new Map(this.perAddress) };
  }

  /**
   * The server is stopping: no new connection is admitted, connections with nothing in flight and
   * no WebSocket are closed at once, and whatever is left (answers being written, WebSockets
   * told 1001) is destroyed after `graceMs`, so a stop never waits for a peer.
   */
  closeAll(graceMs: number): void {
    this.closing = true;
    for (const c of this.conns.values()) if (c.yields || c.gone) c.socket.destroy();
    const t = setTimeout(() => {
      for (const c of this.conns.values()) c.socket.destroy();
      this.stopReconciling();
    }, graceMs);
    t.unref();
  }

  private stopReconciling(): void {
    if (this.reconciler) clearInterval(this.reconciler);
    this.reconciler = null;
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
    if (key === null || this.closing) {
      socket.destroy();
      return;
    }
    // the same address and port again: the kernel has let go of the old connection, whatever
    // node last heard of it, so its slot (and its address's count) is given back first
    const stale = this.conns.get(key);
    if (stale) {
      this.forget(stale);
      stale.socket.destroy();
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
    // the raw socket's close, not a higher-level event (an upgrade's, a response's): every way a
    // socket ends passes through it; unless it was forgotten already when it gave way
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
