/** site.yaml `limits:`: what one client may tie up or store on the box. */
import type { SchemaNode } from '../yaml/schema.js';

/** A whole number with its bounds; the hint names them and the default. */
const bounded = (description: string, dflt: number, min: number, max: number, unit = 'a whole number') =>
  ({
    type: 'integer',
    description,
    default: dflt,
    minimum: min,
    maximum: max,
    hint: `use ${unit} between ${min} and ${max}, usually ${dflt}`,
  }) as const satisfies SchemaNode;
const seconds = (description: string, dflt: number, min: number, max: number) =>
  bounded(description, dflt, min, max, 'whole seconds');

/**
 * What one client may hold of the box's sockets and time (docs/security.md "HTTP limits"). The
 * defaults are sized for a Pi serving a handful of LAN partners; they bound what a hostile host
 * on the LAN can tie up, not what a well-behaved client needs.
 */
export const HTTP_LIMITS = {
  type: 'object',
  description: 'timeouts and connection caps of the API port (HTTP and WebSocket)',
  default: {},
  additionalProperties: false,
  properties: {
    headersSeconds: seconds(
      'a request whose headers have not all arrived this long after it began is answered 408 and closed',
      10,
      1,
      300,
    ),
    requestSeconds: seconds(
      'a request (headers and body) not received completely this long after it began is answered 408 and closed; at least headersSeconds',
      30,
      1,
      600,
    ),
    idleSeconds: seconds(
      'a connection on which nothing is sent or received for this long is closed (a WebSocket is kept alive by its pings instead)',
      60,
      1,
      3600,
    ),
    keepAliveSeconds: seconds(
      'an idle keep-alive connection is closed after this long without a new request',
      5,
      1,
      600,
    ),
    maxConnections: bounded(
      'most open connections on the API port, WebSockets included; further ones are closed at once',
      128,
      1,
      10000,
    ),
    maxConnectionsPerAddress: bounded(
      'most open connections from one client address, WebSockets included',
      32,
      1,
      10000,
    ),
    maxPipelinedRequests: bounded(
      'most requests one connection may have sent and not yet been answered; one more closes the connection',
      16,
      1,
      1000,
    ),
    maxUnsentMiB: bounded(
      'answer bytes written but not yet taken by their clients, in MiB over all connections; past it, a request from an address holding more than its share is answered 503',
      16,
      1,
      1024,
    ),
    maxWebSocketsPerClient: bounded(
      'most open WebSockets of one API client (one client id), from all its addresses together',
      8,
      1,
      10000,
    ),
  },
} as const satisfies SchemaNode;

/**
 * Quotas on dynamic tariffs (docs/security.md "Tariff ownership and quotas"): a partner's writes
 * go to the Pi's SD card, so how much one client may store is bounded.
 */
export const DYNAMIC_TARIFFS = {
  type: 'object',
  description: 'quotas on the dynamic tariffs API clients store on the gateway',
  default: {},
  additionalProperties: false,
  properties: {
    maxPerClient: bounded('most dynamic tariffs one API client may own', 10, 1, 1000),
    maxValuesPerTariff: bounded(
      'most price values one dynamic tariff may hold (350400 = ten years of quarter hours)',
      350400,
      96,
      10000000,
    ),
    maxValuesPerClientPerDay: bounded(
      'most price values one API client may store in 24 hours, over all its tariffs (a PATCH that replaces values counts its new ones)',
      50000,
      96,
      10000000,
    ),
  },
} as const satisfies SchemaNode;
