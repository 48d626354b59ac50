import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import { type WebSocket, WebSocketServer } from 'ws';
import { ApiError, errorBody } from '../../core/errors.js';
import type { ClosedBucket, EventBus, GridEvent } from '../../core/events.js';
import type { Feature } from '../../core/feature.js';
import { ServerResponse } from '../../core/node-http.js';
import type { StreamDef } from '../../core/streams.js';
import { gridEventMessage } from '../../grid/message.js';
import { follow } from '../../ops/metrics.js';
import { formatInterval } from '../../telemetry/interval.js';
import { BucketFragments, type DeviceClass, telemetryMessages } from '../../telemetry/messages.js';
import { answerAsHttp1 } from '../plain-upgrade.js';
import { answerRaw } from '../raw-answer.js';
import { RefusalLog, remoteOf } from '../refusals.js';
import { parseWsQuery, type WsSubscription } from './query.js';

export const WS_PATH = '/ws';

/** The request's path for a log line: never its query, where a client may have put its token. */
const pathOf = (req: IncomingMessage): string => (req.url ?? '').split('?')[0]!.slice(0, 100);

/** Who is on the other end of a connection, as the token service established it. */
export interface WsPrincipal {
  clientId: string;
  /** real ms until the token expires by itself, at the upgrade; the socket is rechecked then */
  expiresInMs?: number;
}

/** Why an open socket's grant no longer holds (see GRANT_CLOSE for the close codes). */
export type WsGrantEnd = 'expired' | 'revoked' | 'devices-changed';

export type WsAuthResult =
  | { ok: true; principal: WsPrincipal }
  | { ok: false; statusCode: number; headers?: Record<string, string>; body: object };

/** What the streams need from access control: who connects, and which devices each class shows them. */
export interface WsAccess {
  authenticate(req: IncomingMessage): Promise<WsAuthResult> | WsAuthResult;
  /**
   * Whether the grant the socket was let in on still holds, or why not. Runs every
   * `grantRecheckMs`, at the token's expiry and before every push, so it must stay cheap.
   */
  recheck(p: WsPrincipal): WsGrantEnd | null;
  /** device ids the client sees as a partner (assigned by the installer) */
  partnerDevices(p: WsPrincipal): ReadonlySet<string>;
  /** device ids whose owner granted this client `telemetry-realtime` through publishTo */
  customerDevices(p: WsPrincipal): ReadonlySet<string>;
}

export interface WsOptions {
  log: Logger;
  stream: (id: string) => StreamDef | undefined;
  maxEntriesPerMessage: number;
  socScale: 'percent' | 'fraction';
  /**
   * a client silent for longer than this (real ms, not the daemon clock: a real client pings on
   * real time even when the demo runs faster) is closed; the spec asks for a ping every 20 s (docs/api.md "Connection")
   */
  pingTimeoutMs?: number;
  /** a client whose unsent data exceeds this is dropped: it is not reading */
  maxBufferedBytes?: number;
  /** open sockets one API client (client id) may hold, from all its addresses (limits.http.maxWebSocketsPerClient) */
  maxPerClient?: number;
  /**
   * how often every open socket's grant is checked again, real ms (default 5 s): revocations
   * are made by `sitegw clients ...` in another process, so the daemon learns of them from the store
   */
  grantRecheckMs?: number;
  /** the bounded log of refusals, shared with the HTTP side (a new one when absent) */
  refusals?: RefusalLog;
  /** the daemon's metrics registry: the client counts go there while the server runs */
  registry?: Registry;
}

interface Client {
  ws: WebSocket;
  principal: WsPrincipal;
  sub: WsSubscription;
  lastSeen: number;
  remote: string;
  /** fires at the token's expiry */
  expiry: NodeJS.Timeout | null;
}

/** Close codes (RFC 6455 §7.4.1). */
const GOING_AWAY = 1001;
const POLICY = 1008;
const INTERNAL = 1011;

/**
 * Close codes of a socket whose grant ended (RFC 6455 §7.4.2 private range; docs/security.md):
 * 4401 the access token expired (get a new one, reconnect); 4403 the grant was revoked: secret
 * rotated, client removed, refresh family revoked, owner password changed (the token is dead);
 * 4409 the installer changed the client's devices (reconnect with the same token for the new set).
 */
export const GRANT_CLOSE: Record<WsGrantEnd, { code: number; reason: string }> = {
  expired: { code: 4401, reason: 'access token expired' },
  revoked: { code: 4403, reason: 'access revoked' },
  'devices-changed': { code: 4409, reason: 'assigned devices changed; reconnect' },
};
/** A timer longer than this fires at once (node clamps it to 1 ms); the periodic recheck covers the rest. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** the series the server keeps in the daemon's registry while it runs */
const METRICS = { clients: 'sitegw_ws_clients', dropped: 'sitegw_ws_dropped_clients_total' } as const;

/**
 * The `/ws` endpoint on the HTTP port: the query and the bearer token are checked before the
 * upgrade (a refusal is an HTTP answer with the error body), then the client gets the streams
 * it subscribed to, limited to the devices it may see.
 */
export class WsServer implements Feature {
  readonly name = 'websocket';
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 4096, clientTracking: false });
  private readonly clients = new Set<Client>();
  private sweep: NodeJS.Timeout | null = null;
  private grantTimer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void)[] = [];
  private readonly refusals: RefusalLog;
  /**
   * The upgrade event's listener: whatever the upgrade throws stays with this one connection,
   * logged with the client's address, and its socket is dropped; nothing reaches the process as
   * an unhandled rejection.
   */
  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    this.upgrade(req, socket, head).catch((err: unknown) => {
      this.refusals.fault(
        { err, remote: remoteOf(req), path: pathOf(req) },
        'websocket upgrade failed; its connection is dropped',
      );
      socket.destroy();
    });
  };
  dropped = 0;

  constructor(
    private readonly server: Server,
    private readonly bus: EventBus,
    private readonly access: WsAccess,
    private readonly opts: WsOptions,
  ) {
    this.refusals = opts.refusals ?? new RefusalLog(opts.log);
    // ws's own handshake checks (method, Sec-WebSocket-Key and -Version) answer in the API's error
    // shape, as every other refusal does, instead of ws's plain-text one
    this.wss.on('wsClientError', (err: Error, socket: Duplex, req: IncomingMessage) => {
      const status = req.method === 'GET' ? 400 : 405;
      const headers: Record<string, string> = status === 405 ? { Allow: 'GET' } : { 'Sec-WebSocket-Version': '13' };
      this.refuse(
        req,
        socket,
        status,
        errorBody(
          status,
          status === 405 ? 'METHOD_NOT_ALLOWED' : 'BAD_REQUEST',
          `${err.message}: a WebSocket upgrade is GET ${WS_PATH} with Upgrade, Sec-WebSocket-Key and Sec-WebSocket-Version: 13`,
        ),
        headers,
      );
    });
  }

  get clientCount(): number {
    return this.clients.size;
  }

  start(): void {
    this.server.on('upgrade', this.onUpgrade);
    this.unsubscribe = [
      this.bus.on('bucketsClosed', (e) => this.pushTelemetry(e.start, e.end, e.buckets)),
      this.bus.on('gridEvent', (e) => this.pushGridEvent(e)),
    ];
    this.armSweep();
    this.grantTimer = setInterval(() => {
      for (const c of this.clients) this.holds(c);
    }, this.opts.grantRecheckMs ?? 5_000);
    this.grantTimer.unref();
    this.registerMetrics();
  }

  private registerMetrics(): void {
    const registers = this.opts.registry ? [this.opts.registry] : [];
    if (registers.length === 0) return;
    const self = this;
    new Gauge({
      name: METRICS.clients,
      help: 'Connected WebSocket clients',
      registers,
      collect() {
        this.set(self.clientCount);
      },
    });
    const seen = new Map<string, number>();
    new Counter({
      name: METRICS.dropped,
      help: 'WebSocket clients dropped because they did not read their messages',
      registers,
      collect() {
        follow(this, seen, 'dropped', {}, self.dropped);
      },
    });
  }

  stop(): void {
    for (const name of Object.values(METRICS)) this.opts.registry?.removeSingleMetric(name);
    this.server.off('upgrade', this.onUpgrade);
    for (const u of this.unsubscribe) u();
    if (this.sweep) clearInterval(this.sweep);
    if (this.grantTimer) clearInterval(this.grantTimer);
    for (const c of this.clients) this.drop(c, GOING_AWAY, 'server stopping');
  }

  /**
   * The request target as a URL, or null when it is none: `//` and `/\\` name no host, so the URL
   * parser throws on them, and a throw here used to escape as an unhandled rejection that ended
   * the process (issue 14 finding 1). An absolute-form target (`ws://host/ws`) is allowed, as
   * RFC 6455 §4.2.1 allows it; only its path and query count.
   */
  private static target(raw: string | undefined): URL | null {
    try {
      return new URL(raw ?? '/', 'http://gateway');
    } catch {
      return null;
    }
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    // h2c and any other upgrade but ours: ignored, the request answered as HTTP/1.1
    if (String(req.headers.upgrade).toLowerCase() !== 'websocket')
      return answerAsHttp1(this.server, (r) => new ServerResponse(r), req, socket);
    const url = WsServer.target(req.url);
    if (!url)
      return this.refuse(
        req,
        socket,
        400,
        errorBody(400, 'BAD_REQUEST', `the request target is not a path; use ${WS_PATH}?streams=...`),
      );
    if (url.pathname !== WS_PATH)
      return this.refuse(
        req,
        socket,
        404,
        errorBody(404, 'ROUTE_NOT_FOUND', `no WebSocket endpoint at ${url.pathname.slice(0, 100)}; use ${WS_PATH}`),
      );
    let sub: WsSubscription;
    try {
      sub = parseWsQuery(url.searchParams);
    } catch (err) {
      if (err instanceof ApiError)
        return this.refuse(req, socket, err.statusCode, errorBody(err.statusCode, err.code, err.message));
      throw err;
    }
    let auth: WsAuthResult;
    try {
      auth = await this.access.authenticate(req);
    } catch (err) {
      this.opts.log.error({ err, remote: remoteOf(req) }, 'websocket authentication failed');
      return this.refuse(
        req,
        socket,
        500,
        errorBody(500, 'INTERNAL_ERROR', 'internal error; the gateway log has the details'),
      );
    }
    if (!auth.ok) return this.refuse(req, socket, auth.statusCode, auth.body, auth.headers);
    const principal = auth.principal;
    const max = this.opts.maxPerClient ?? Number.POSITIVE_INFINITY;
    let held = 0;
    for (const c of this.clients) if (c.principal.clientId === principal.clientId) held++;
    if (held >= max)
      return this.refuse(
        req,
        socket,
        429,
        errorBody(
          429,
          'WEBSOCKET_LIMIT_REACHED',
          `this client holds ${held} WebSockets, its limit (limits.http.maxWebSocketsPerClient); close one first`,
        ),
        { 'Retry-After': '5' },
      );
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, principal, sub, remoteOf(req)));
  }

  /** An HTTP answer with the error body on the raw socket, and a bounded log line naming the client. */
  private refuse(
    req: IncomingMessage,
    socket: Duplex,
    status: number,
    body: object,
    headers: Record<string, string> = {},
  ): void {
    const code = (body as { code?: unknown }).code;
    this.refusals.note({
      remote: remoteOf(req),
      statusCode: status,
      code,
      method: req.method,
      path: pathOf(req),
      upgrade: true,
    });
    answerRaw(socket, status, body, headers);
  }

  private accept(ws: WebSocket, principal: WsPrincipal, sub: WsSubscription, remote: string): void {
    const client: Client = { ws, principal, sub, lastSeen: performance.now(), remote, expiry: null };
    this.clients.add(client);
    if (principal.expiresInMs !== undefined && principal.expiresInMs < MAX_TIMER_MS) {
      client.expiry = setTimeout(() => this.holds(client), Math.max(0, principal.expiresInMs));
      client.expiry.unref();
    }
    const seen = () => (client.lastSeen = performance.now());
    ws.on('ping', seen);
    ws.on('pong', seen);
    // the streams take no commands; any frame still shows the client is alive
    ws.on('message', seen);
    ws.on('error', () => ws.terminate());
    ws.on('close', () => this.forget(client));
  }

  /**
   * True while the client's grant holds; otherwise the socket is closed with the code that says
   * why (GRANT_CLOSE). A grant that cannot be checked (the store failing) is not assumed to hold.
   */
  private holds(c: Client): boolean {
    if (!this.clients.has(c)) return false;
    let end: WsGrantEnd | null;
    try {
      end = this.access.recheck(c.principal);
    } catch (err) {
      this.opts.log.error(
        { err, client: c.principal.clientId, remote: c.remote },
        'websocket grant could not be checked; closing the socket',
      );
      this.drop(c, INTERNAL, 'grant could not be checked');
      return false;
    }
    if (end === null) return true;
    const { code, reason } = GRANT_CLOSE[end];
    this.opts.log.info({ client: c.principal.clientId, remote: c.remote, code }, `websocket closed: ${reason}`);
    this.drop(c, code, reason);
    return false;
  }

  private drop(c: Client, code: number, reason: string): void {
    this.forget(c);
    c.ws.close(code, reason);
  }

  private forget(c: Client): void {
    this.clients.delete(c);
    if (c.expiry) clearTimeout(c.expiry);
    c.expiry = null;
  }

  private armSweep(): void {
    const timeout = this.opts.pingTimeoutMs ?? 60_000;
    this.sweep = setInterval(
      () => {
        const now = performance.now();
        for (const c of this.clients) {
          if (now - c.lastSeen > timeout) this.drop(c, POLICY, `no ping for ${Math.round(timeout / 1000)} s`);
        }
      },
      Math.min(5_000, timeout / 4),
    );
    this.sweep.unref();
  }

  private send(c: Client, data: string): void {
    if (c.ws.bufferedAmount > (this.opts.maxBufferedBytes ?? 4 << 20)) {
      // a client that does not read would make the gateway hold every push for it
      this.opts.log.warn(
        { client: c.principal.clientId, buffered: c.ws.bufferedAmount },
        'dropping websocket client that does not read',
      );
      this.dropped++;
      this.forget(c);
      c.ws.terminate();
      return;
    }
    c.ws.send(data);
  }

  private pushTelemetry(start: number, end: number, buckets: ClosedBucket[]): void {
    const fragments = new BucketFragments(buckets, this.opts.stream, this.opts.socScale);
    const interval = formatInterval(start, end);
    // clients that see the same devices with the same include get the same strings
    const built = new Map<string, string[]>();
    for (const c of this.clients) {
      if (!c.sub.streams.has('telemetry-realtime') || !this.holds(c)) continue;
      for (const cls of c.sub.telemetryDevices) {
        const devices = this.devicesOf(c, cls);
        if (devices.size === 0) continue;
        const key = `${cls}|${c.sub.telemetryInclude.join(',')}|${[...devices].sort().join(',')}`;
        let msgs = built.get(key);
        if (!msgs) {
          const entries: string[] = [];
          for (const [streamId, json] of fragments.entries(c.sub.telemetryInclude)) {
            const def = this.opts.stream(streamId);
            if (def && devices.has(def.deviceId)) entries.push(json);
          }
          msgs = telemetryMessages(entries, cls, interval, c.sub.telemetryInclude, this.opts.maxEntriesPerMessage);
          built.set(key, msgs);
        }
        for (const m of msgs) this.send(c, m);
      }
    }
  }

  private pushGridEvent(e: GridEvent): void {
    const msg = gridEventMessage(e);
    for (const c of this.clients) {
      // customer-delegated devices get no grid events (docs/api.md "Stream grid-events")
      if (c.sub.streams.has('grid-events') && this.holds(c) && this.access.partnerDevices(c.principal).has(e.deviceId))
        this.send(c, msg);
    }
  }

  private devicesOf(c: Client, cls: DeviceClass): ReadonlySet<string> {
    return cls === 'partner' ? this.access.partnerDevices(c.principal) : this.access.customerDevices(c.principal);
  }
}
