/**
 * Slow and greedy clients against the real daemon over raw TCP (site.yaml limits.http): headers
 * trickled a line at a time and a token request whose body comes a byte at a time are answered
 * 408 and closed once their timeout has passed, however long the client would keep going; past
 * the connection caps (per address, then in all, a WebSocket counting like any connection) a
 * new connection is closed unanswered while the open ones are still served, and once they close
 * new ones are taken again.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attackLog } from '../support/attack-log.js';
import { attackCount } from '../support/attack-scale.js';
import { basic, rawRequest } from '../support/auth.js';
import { demoSite, waitFor } from '../support/demo.js';
import { StreamClient } from '../support/ws-client.js';

const PER_ADDRESS = 3;
const TOTAL = 5;

/** A raw connection that records what the server sent and when it closed. */
class Raw {
  data = '';
  readonly closed: Promise<void>;
  private constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => (this.data += d.toString('latin1')));
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  static open(port: number, localAddress = '127.0.0.1'): Promise<Raw> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, localAddress });
      const raw = new Raw(socket);
      socket.once('connect', () => resolve(raw));
      socket.once('error', reject);
    });
  }

  /** Sends a GET and waits for a whole answer (headers and Content-Length body), or the close. */
  async get(path: string): Promise<string> {
    const from = this.data.length;
    this.socket.write(`GET ${path} HTTP/1.1\r\nHost: sitegw\r\n\r\n`);
    await waitFor(`an answer to GET ${path}`, () => {
      const text = this.data.slice(from);
      const head = text.indexOf('\r\n\r\n');
      if (head < 0) return this.socket.destroyed ? 'closed' : false;
      const length = Number(/content-length: *(\d+)/i.exec(text.slice(0, head))?.[1] ?? 0);
      return text.length >= head + 4 + length || this.socket.destroyed ? 'answered' : false;
    });
    return this.data.slice(from);
  }

  /** Writes `chunk` every `everyMs` until the server closes the connection. */
  trickle(chunk: string, everyMs: number): void {
    const timer = setInterval(() => this.socket.destroyed || this.socket.write(chunk), everyMs);
    void this.closed.then(() => clearInterval(timer));
  }
}

/** every line the daemons of this file log, scanned for secrets at its end (support/attack-log.ts) */
const { log } = attackLog();

describe('slow and greedy clients', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let token: string;
  const wsUrl = () => `${demo.url.replace(/^http/, 'ws')}/ws?streams=telemetry-realtime`;
  const port = () => Number(new URL(demo.url).port);
  const openConnections = () =>
    new Promise<number>((resolve, reject) =>
      demo.daemon.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
    );

  beforeAll(async () => {
    demo = await demoSite({
      log,
      speed: 60,
      configure: (c) => {
        // keep-alive and idle long, so the cap test's open connections stay open while it runs
        c.limits.http = {
          headersSeconds: 1,
          requestSeconds: 2,
          idleSeconds: 60,
          keepAliveSeconds: 60,
          maxConnections: TOTAL,
          maxConnectionsPerAddress: PER_ADDRESS,
          maxPipelinedRequests: 16,
          maxUnsentMiB: 16,
          maxWebSocketsPerClient: 8,
        };
      },
    });
    const { id, secret } = demo.credentials.client;
    // Connection: close, so the token request holds no slot afterwards
    token = (
      await rawRequest({
        method: 'POST',
        url: demo.credentials.tokenUrl,
        headers: {
          authorization: basic(id, secret),
          'content-type': 'application/x-www-form-urlencoded',
          connection: 'close',
        },
        body: 'grant_type=client_credentials',
      })
    ).body.access_token as string;
  });
  afterAll(async () => {
    await demo?.cleanup();
  });

  it('headers trickled a line at a time are answered 408 and the connection closed', { timeout: 20_000 }, async () => {
    const clients = await Promise.all(Array.from({ length: attackCount(2, 10) }, () => Raw.open(port())));
    for (const c of clients) {
      c.socket.write('GET /api/v1/sites HTTP/1.1\r\nHost: sitegw\r\n');
      c.trickle('X-Slow: a\r\n', 200);
    }
    for (const c of clients) {
      await c.closed;
      expect(c.data).toMatch(/^HTTP\/1\.1 408 /);
    }
  });

  it('a token request whose body comes a byte at a time is answered 408 and closed; a WebSocket outlives that timeout', {
    timeout: 20_000,
  }, async () => {
    const ws = await StreamClient.connect(wsUrl(), token);
    const { id, secret } = demo.credentials.client;
    const body = 'grant_type=client_credentials';
    const c = await Raw.open(port());
    c.socket.write(
      `POST /oauth2/token HTTP/1.1\r\nHost: sitegw\r\nAuthorization: ${basic(id, secret)}\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length + 1000}\r\n\r\n`,
    );
    c.trickle('a', 200);
    await c.closed;
    expect(c.data).toMatch(/^HTTP\/1\.1 408 /);
    expect(c.data).not.toMatch(/access_token/);
    // opened before the slow request and so older than requestSeconds: the timeouts are for requests, not upgraded sockets
    expect(ws.closed).toBeNull();
    ws.close();
  });

  it('past the per-address cap an idle connection of that address gives way; with only WebSockets held the newcomer gets 503', {
    timeout: 30_000,
  }, async () => {
    await waitFor('the earlier connections to close', async () => (await openConnections()) === 0);
    const idle: Raw[] = [];
    for (let i = 0; i < PER_ADDRESS; i++) idle.push(await Raw.open(port()));
    for (const c of idle) expect(await c.get('/healthz')).toMatch(/^HTTP\/1\.1 200 /);
    // one more from the same address: the oldest idle one gives way, the newcomer is served
    const next = await Raw.open(port());
    expect(await next.get('/healthz')).toMatch(/^HTTP\/1\.1 200 /);
    await idle[0]!.closed;
    for (const c of [...idle.slice(1), next]) c.socket.end();
    await waitFor('the slots to be freed', async () => (await openConnections()) === 0);

    // WebSockets never give way: a fourth connection of their address is answered 503
    const streams = await Promise.all(Array.from({ length: PER_ADDRESS }, () => StreamClient.connect(wsUrl(), token)));
    const refused = await Raw.open(port());
    await refused.closed;
    expect(refused.data).toMatch(/^HTTP\/1\.1 503 [\s\S]*retry-after: 1[\s\S]*"code":"SERVER_BUSY"/i);
    for (const ws of streams) expect(ws.closed).toBeNull();
    for (const ws of streams) ws.close();
    await waitFor('the slots to be freed', async () => (await openConnections()) === 0);
  });

  it('the port full: a connection of the address holding the most gives way, one not yet answered before an idle one, and is told 503', {
    timeout: 30_000,
  }, async () => {
    // 127.0.0.1 holds three sockets that never sent a request, 127.0.0.2 two idle keep-alive ones
    const fresh: Raw[] = [];
    for (let i = 0; i < PER_ADDRESS; i++) fresh.push(await Raw.open(port()));
    const idle: Raw[] = [];
    for (let i = PER_ADDRESS; i < TOTAL; i++) idle.push(await Raw.open(port(), '127.0.0.2'));
    for (const c of idle) expect(await c.get('/healthz')).toMatch(/^HTTP\/1\.1 200 /);
    await waitFor('all five open', async () => (await openConnections()) === TOTAL);

    const newcomer = await Raw.open(port(), '127.0.0.3');
    expect(await newcomer.get('/healthz')).toMatch(/^HTTP\/1\.1 200 /);
    const gaveWay = await Promise.race(fresh.map((c, i) => c.closed.then(() => i)));
    expect(fresh[gaveWay]!.data).toMatch(/^HTTP\/1\.1 503 /);
    // the other address's idle connections were left alone
    for (const c of idle) expect(await c.get('/healthz')).toMatch(/^HTTP\/1\.1 200 /);

    for (const c of [...fresh, ...idle, newcomer]) c.socket.destroy();
  });

  it('the port full of WebSockets: a newcomer is answered 503, the streams stay open', {
    timeout: 30_000,
  }, async () => {
    await waitFor('the slots to be freed', async () => (await openConnections()) === 0);
    const streams: StreamClient[] = [];
    for (let i = 0; i < PER_ADDRESS; i++) streams.push(await StreamClient.connect(wsUrl(), token));
    for (let i = PER_ADDRESS; i < TOTAL; i++)
      streams.push(await StreamClient.connect(wsUrl(), token, { localAddress: '127.0.0.2' }));
    await waitFor('all five open', async () => (await openConnections()) === TOTAL);
    const refused = await Raw.open(port(), '127.0.0.4');
    await refused.closed;
    expect(refused.data).toMatch(/^HTTP\/1\.1 503 /);
    for (const ws of streams) expect(ws.closed).toBeNull();
    for (const ws of streams) ws.close();
  });

  it('the daemon is still healthy', async () => {
    await waitFor('the slots to be freed', async () => (await openConnections()) === 0);
    const r = await rawRequest({ url: `${demo.url}/healthz`, headers: { connection: 'close' } });
    expect(r.status).toBe(200);
  });
});
