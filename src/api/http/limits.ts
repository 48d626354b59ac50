/**
 * Timeouts and connection caps of the API port (site.yaml limits.http, docs/security.md "HTTP
 * limits"). Without them a client that trickles its headers or body holds a socket, a parser
 * and its buffers for as long as it likes: fastify's requestTimeout of 0 even turns off node's
 * own five-minute limit.
 *
 * Who does what (node 20, 22 and 24 alike):
 * - node's `headersTimeout` / `requestTimeout` (http.createServer options): headers, and the whole
 *   request with its body, must have arrived this long after the request began, else 408 and
 *   close. Node checks them on a timer (`connectionsCheckingInterval`, default 30 s), so the
 *   timer is tied to the timeouts here, or a slow request would live up to 30 s past them.
 * - fastify's `connectionTimeout` (socket.setTimeout): no traffic either way for this long, the
 *   socket is closed: a client that stops reading its answer. ws turns it off on an upgraded
 *   socket, whose liveness its ping timeout watches.
 * - fastify's `keepAliveTimeout` (node's, set by fastify to 72 s unless given): how long an idle
 *   keep-alive connection keeps its slot.
 * - the connection caps (maxConnections, maxConnectionsPerAddress) are sitegw's own admission
 *   (connections.ts), not node's `server.maxConnections`, which closes the newcomer whoever holds
 *   the slots; an upgraded WebSocket is still a connection of the server and counts.
 */
import type { HttpLimits } from '../../config/types.js';

/** Options for http(s).createServer (through fastify's `http` / `https`) and for fastify itself. */
export function serverTimeouts(l: HttpLimits): {
  node: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number };
  fastify: { requestTimeout: number; connectionTimeout: number; keepAliveTimeout: number };
} {
  const headersTimeout = l.headersSeconds * 1000;
  const requestTimeout = l.requestSeconds * 1000;
  // a quarter of the shorter timeout: a request is cut at most 25 % late, for one walk over the
  // open connections every 2.5 s with the defaults
  const connectionsCheckingInterval = Math.max(250, Math.min(headersTimeout, requestTimeout) / 4);
  return {
    node: { headersTimeout, requestTimeout, connectionsCheckingInterval },
    fastify: { requestTimeout, connectionTimeout: l.idleSeconds * 1000, keepAliveTimeout: l.keepAliveSeconds * 1000 },
  };
}
