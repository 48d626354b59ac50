/**
 * What a connection may ask of the gateway before its answers are taken (docs/security.md
 * "Bounded work and memory"). node parses every request of a chunk it reads and fastify answers each one,
 * so 16 sockets with 1,600 pipelined requests each, never read, took the heap past its limit in
 * seconds (issue 26); node itself only stops reading a socket once its answers back up.
 * - Per connection: at most `maxPipelinedRequests` requests received and not yet answered; the
 *   one past it closes the connection (its answers would only pile up for a peer that does not
 *   read them). node pauses the socket meanwhile once its answers back up, and a socket that
 *   takes nothing for `idleSeconds` is closed.
 * - Over all connections: answer bytes written but not taken, at most `maxUnsentMiB`. Past it, a
 *   request from an address holding at least an even share of them (the budget over the
 *   addresses holding any, the asking one counted) is answered 503 with Retry-After; an address
 *   that holds little, such as a partner reading its answers, is still served.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { errorBody } from '../../core/errors.js';
import type { RefusalLog } from '../refusals.js';
import type { Connections } from './connections.js';

export interface GateLimits {
  maxPipelinedRequests: number;
  maxUnsentMiB: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Puts the gate in front of fastify's request listener. fastify adds that one listener when it
 * makes the server; taking it over keeps fastify's own server set-up (timeouts, HTTPS) as it is.
 */
export function gateRequests(server: Server, conns: Connections, l: GateLimits, refusals: RefusalLog): void {
  const handlers = server.listeners('request') as Handler[];
  if (handlers.length !== 1) throw new Error(`expected fastify's one request listener, found ${handlers.length}`);
  const handler = handlers[0]!;
  server.removeListener('request', handler);
  const budget = l.maxUnsentMiB * 1024 * 1024;

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const c = conns.of(req);
    if (!c) return handler(req, res);
    if (c.open.size >= l.maxPipelinedRequests) {
      if (!req.socket.destroyed)
        refusals.note({
          remote: c.addr,
          statusCode: 'connection',
          reason: `limits.http.maxPipelinedRequests (${l.maxPipelinedRequests}) exceeded: connection closed`,
        });
      req.socket.destroy();
      return;
    }
    c.open.add(res);
    c.last = req;
    const done = () => c.open.delete(res);
    res.once('finish', () => {
      c.served++;
      done();
    });
    res.once('close', done);
    const holders = overBudget(conns.all(), c.addr, budget);
    if (holders) {
      refusals.note({
        remote: c.addr,
        statusCode: 503,
        method: req.method,
        path: (req.url ?? '').split('?')[0]!.slice(0, 100),
        reason: `limits.http.maxUnsentMiB (${l.maxUnsentMiB}) reached`,
        holders,
      });
      const json = JSON.stringify(
        errorBody(503, 'SERVER_BUSY', 'the gateway holds too many answers not yet read from this address; retry'),
      );
      res.writeHead(503, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(json),
        'retry-after': '1',
        connection: 'close',
      });
      res.end(json);
      return;
    }
    handler(req, res);
  });
}

/**
 * Null while the budget holds or `addr` holds less than its share; else the top holders, for the
 * log. Exported for its unit test: on loopback the kernel's socket buffers take megabytes of
 * answers before any stays in the daemon, so a test over sockets rarely reaches the budget.
 */
export function overBudget(
  conns: Iterable<{ addr: string; unsent: number }>,
  addr: string,
  budget: number,
): string | null {
  let total = 0;
  // made at the first connection holding anything: every request passes here, nearly always with none
  let byAddr: Map<string, number> | undefined;
  for (const o of conns) {
    const u = o.unsent;
    if (u === 0) continue;
    total += u;
    byAddr ??= new Map();
    byAddr.set(o.addr, (byAddr.get(o.addr) ?? 0) + u);
  }
  if (total <= budget || !byAddr) return null;
  const own = byAddr.get(addr) ?? 0;
  const share = budget / (byAddr.size + (own > 0 ? 0 : 1));
  if (own < share) return null;
  return [...byAddr]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([a, n]) => `${a}×${Math.round(n / 1024)}KiB`)
    .join(', ');
}
