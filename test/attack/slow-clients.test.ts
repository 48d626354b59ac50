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

  it('caps connections per address and in all, a WebSocket included; open ones keep working; freed slots are taken again', {
    timeout: 30_000,
  }, async () => {
    await waitFor('the earlier connections to close', async () => (await openConnections()) === 0);

    const ws = await StreamClient.connect(wsUrl(), token);
    const first: Raw[] = [];
    for (let i = 1; i < PER_ADDRESS; i++) first.push(await Raw.open(port()));
    for (const c of first) expect(await c.get('/healthz')).toMatch(/^HTTP\/1\.1 200 /);

    // one more from the same address: closed unanswered
    const overAddress = await Raw.open(port());
    expect(await overAddress.get('/healthz')).toBe('');
    await overAddress.closed;

    // another address still gets in, up to the total
    const second: Raw[] = [];
    for (let i = PER_ADDRESS; i < TOTAL; i++) second.push(await Raw.open(port(), '127.0.0.2'));
    for (const c of second) expect(await c.get('/healthz')).toMatch(/^HTTP\/1\.1 200 /);
    const overTotal = await Raw.open(port(), '127.0.0.3');
    expect(await overTotal.get('/healthz')).toBe('');
    await overTotal.closed;

    // the open ones are still served, the WebSocket still open
    for (const c of [...first, ...second]) expect(await c.get('/healthz')).toMatch(/^HTTP\/1\.1 200 /);
    expect(ws.closed).toBeNull();

    for (const c of [...first, ...second]) c.socket.end();
    ws.close();
    await waitFor('the slots to be freed', async () => (await openConnections()) === 0);
    const again: Raw[] = [];
    for (let i = 0; i < PER_ADDRESS; i++) again.push(await Raw.open(port(), '127.0.0.3'));
    for (const c of again) expect(await c.get('/healthz')).toMatch(/^HTTP\/1\.1 200 /);
    for (const c of again) c.socket.end();
  });

  it('the daemon is still healthy', async () => {
    await waitFor('the slots to be freed', async () => (await openConnections()) === 0);
    const r = await rawRequest({ url: `${demo.url}/healthz`, headers: { connection: 'close' } });
    expect(r.status).toBe(200);
  });
});
