import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { GRANT_CLOSE, type WsAccess, type WsGrantEnd, WsServer } from '../../src/api/ws/server.js';
import { type ClosedBucket, EventBus } from '../../src/core/events.js';
import { silentLogger } from '../../src/core/log.js';
import type { StreamDef } from '../../src/core/streams.js';
import { waitFor } from '../support/demo.js';
import { capturingLogger } from '../support/uplink.js';

/** Access as the token service would answer it for one partner seeing device 'd'. */
const access: WsAccess = {
  authenticate: (req) =>
    req.headers.authorization === 'Bearer good'
      ? { ok: true, principal: { clientId: 'p' } }
      : { ok: false, statusCode: 401, body: { code: 'UNAUTHORIZED' } },
  recheck: () => null,
  partnerDevices: () => new Set(['d']),
  customerDevices: () => new Set(),
};
/** every stream 'd…' belongs to device 'd' (a site with many sensors on one device) */
const streamOf = (id: string): StreamDef | undefined =>
  id.startsWith('d') ? { id, deviceId: 'd', deviceKind: 'meter', channels: ['power_W'] } : undefined;

let server: Server | undefined;
let ws: WsServer | undefined;
afterEach(async () => {
  ws?.stop();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
});

async function setup(opts: { maxBufferedBytes?: number; maxEntriesPerMessage?: number } = {}) {
  server = createServer((_req, res) => res.end());
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const bus = new EventBus();
  ws = new WsServer(server, bus, access, {
    log: silentLogger(),
    stream: streamOf,
    maxEntriesPerMessage: opts.maxEntriesPerMessage ?? 100,
    socScale: 'percent',
    maxBufferedBytes: opts.maxBufferedBytes,
  });
  ws.start();
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws?streams=telemetry-realtime`;
  return { bus, url };
}

const bucket = (start: number): ClosedBucket => ({
  streamId: 'd',
  start,
  end: start + 900_000,
  values: { power_W: 1 },
});

describe('WsServer', () => {
  it('drops a client that does not read before it can grow the gateway memory; a reading client stays', async () => {
    const { bus, url } = await setup({ maxBufferedBytes: 64 * 1024 });
    const reader = new WebSocket(url, { headers: { authorization: 'Bearer good' } });
    const stalled = new WebSocket(url, { headers: { authorization: 'Bearer good' } });
    let received = 0;
    reader.on('message', () => received++);
    await Promise.all([reader, stalled].map((c) => new Promise((r) => c.once('open', r))));
    // the stalled client stops reading from its socket: the kernel buffers fill, then ours
    (stalled as unknown as { _socket: { pause(): void } })._socket.pause();
    // 200 sensors a push, about 20 kB: the stalled client falls behind within a few hundred pushes
    for (let i = 0; i < 2000 && ws!.dropped === 0; i++) {
      const start = i * 900_000;
      const buckets = Array.from({ length: 200 }, (_, k) => ({
        ...bucket(start),
        streamId: `d${k}`,
        values: { power_W: k + 0.123456789 },
      }));
      bus.emit('bucketsClosed', { start, end: start + 900_000, buckets });
      await new Promise((r) => setImmediate(r));
    }
    expect(ws!.dropped).toBe(1);
    expect(ws!.clientCount).toBe(1);
    await waitFor('reader received', () => received > 0);
    reader.close();
    stalled.terminate();
  });

  it('closes every client with 1001 when it stops', async () => {
    const { url } = await setup();
    const c = new WebSocket(url, { headers: { authorization: 'Bearer good' } });
    await new Promise((r) => c.once('open', r));
    const code = new Promise<number>((r) => c.once('close', (k) => r(k)));
    ws!.stop();
    expect(await code).toBe(1001);
  });

  it('takes no oversized frames: the connection is closed, the server goes on', async () => {
    const { url } = await setup();
    const c = new WebSocket(url, { headers: { authorization: 'Bearer good' } });
    await new Promise((r) => c.once('open', r));
    const code = new Promise<number>((r) => c.once('close', (k) => r(k)));
    c.send('x'.repeat(10_000));
    expect(await code).toBe(1009);
    const again = new WebSocket(url, { headers: { authorization: 'Bearer good' } });
    await new Promise((r) => again.once('open', r));
    again.close();
  });

  it('contains a failure inside the upgrade: logged with the client address, that socket dropped, the server goes on', async () => {
    server = createServer((_req, res) => res.end());
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const { log, lines } = capturingLogger();
    let calls = 0;
    // the first answer breaks when read (a fault outside every try of the upgrade), later ones are fine
    const faulty: WsAccess = {
      ...access,
      authenticate: (req) => {
        if (calls++ > 0) return access.authenticate(req);
        return Object.defineProperty({}, 'ok', {
          get: () => {
            throw new Error('injected upgrade fault');
          },
        }) as never;
      },
    };
    ws = new WsServer(server, new EventBus(), faulty, {
      log,
      stream: streamOf,
      maxEntriesPerMessage: 100,
      socScale: 'percent',
    });
    ws.start();
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws?streams=telemetry-realtime`;
    // handshakeTimeout only bounds how long the old, hanging behaviour takes to fail
    const broken = new WebSocket(url, { headers: { authorization: 'Bearer good' }, handshakeTimeout: 10_000 });
    const outcome = await new Promise<string>((r) => {
      broken.once('open', () => r('open'));
      broken.once('error', (e) => r(`error: ${e.message}`));
    });
    expect(outcome).toMatch(/^error: socket hang up/);
    const failed = lines().find((l) => l.msg === 'websocket upgrade failed; its connection is dropped');
    expect(failed).toMatchObject({ level: 50, remote: '127.0.0.1', err: { message: 'injected upgrade fault' } });
    const again = new WebSocket(url, { headers: { authorization: 'Bearer good' } });
    await new Promise((r) => again.once('open', r));
    again.close();
  });

  /** a server whose periodic recheck never comes within a test: only the expiry timer or a push can end a grant */
  async function grantServer(grant: () => WsGrantEnd | null, expiresInMs?: number) {
    server = createServer((_req, res) => res.end());
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const bus = new EventBus();
    const timed: WsAccess = {
      ...access,
      authenticate: () => ({ ok: true, principal: { clientId: 'p', expiresInMs } }),
      recheck: grant,
    };
    ws = new WsServer(server, bus, timed, {
      log: silentLogger(),
      stream: streamOf,
      maxEntriesPerMessage: 100,
      socScale: 'percent',
      grantRecheckMs: 3_600_000,
    });
    ws.start();
    const c = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws?streams=telemetry-realtime`);
    const messages: string[] = [];
    c.on('message', (d) => messages.push(d.toString()));
    const closed = new Promise<{ code: number; reason: string }>((r) =>
      c.once('close', (code, reason) => r({ code, reason: reason.toString() })),
    );
    await new Promise((r) => c.once('open', r));
    return { bus, closed, messages };
  }

  it("closes with 4401 when the token's expiry timer fires", async () => {
    // the timer is set 10 ms past the expiry the check sees: timers may fire a millisecond early
    const expiresAt = Date.now() + 40;
    const { closed } = await grantServer(() => (Date.now() >= expiresAt ? 'expired' : null), 50);
    expect(await closed).toEqual(GRANT_CLOSE.expired);
  });

  it('checks the grant before a push: a revoked client gets no data, only the close', async () => {
    let revoked = false;
    const { bus, closed, messages } = await grantServer(() => (revoked ? 'revoked' : null));
    revoked = true;
    bus.emit('bucketsClosed', { start: 0, end: 900_000, buckets: [bucket(0)] });
    expect(await closed).toEqual(GRANT_CLOSE.revoked);
    expect(messages).toEqual([]);
    expect(ws!.clientCount).toBe(0);
  });

  it('a grant that cannot be checked (the store failing) is not assumed to hold: closed with 1011', async () => {
    let broken = false;
    const { bus, closed, messages } = await grantServer(() => {
      if (broken) throw new Error('SQLITE_IOERR');
      return null;
    });
    broken = true;
    bus.emit('bucketsClosed', { start: 0, end: 900_000, buckets: [bucket(0)] });
    expect(await closed).toEqual({ code: 1011, reason: 'grant could not be checked' });
    expect(messages).toEqual([]);
  });
});
