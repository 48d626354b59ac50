/**
 * Generated malformed input at the WebSocket endpoint: mutated query strings (refused before the
 * upgrade with a 400 and the error body, never a 5xx), then, after a valid upgrade, frames a
 * partner should never send: junk text and binary, oversized frames, pings and pongs with
 * payloads, odd close codes, and raw frames with reserved bits, unknown opcodes, no mask or lying
 * lengths. What must hold: the daemon keeps serving (a fresh client is let in, /healthz 200),
 * nothing is logged as failed, and a client subscribed all along is never disconnected.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { partnerToken } from '../support/auth.js';
import { demoSite } from '../support/demo.js';
import { capturingLogger } from '../support/uplink.js';
import { StreamClient } from '../support/ws-client.js';
import { enc, int, jsonJunk, junk, mutateN, pick, rng, SCALE, SEED, Tally } from './gen.js';

type Demo = Awaited<ReturnType<typeof demoSite>>;
const GOOD = 'streams=telemetry-realtime,grid-events&telemetryDevices=partner,customer&telemetryInclude=default,energy';

interface Outcome {
  open: boolean;
  status?: number;
  body?: string;
  ws?: WebSocket;
}

function upgrade(url: string, token: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
    const timer = setTimeout(() => resolve({ open: false }), 5000);
    ws.once('open', () => {
      clearTimeout(timer);
      resolve({ open: true, ws });
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ open: false, status: res.statusCode, body });
      });
    });
    ws.on('error', () => {
      clearTimeout(timer);
      resolve({ open: false });
    });
  });
}

/** A raw frame as the client side writes it, with every header field chosen by the fuzzer. */
function rawFrame(r: () => number): Buffer {
  const fin = int(r, 4) ? 0x80 : 0;
  const rsv = int(r, 3) === 0 ? (1 + int(r, 7)) << 4 : 0;
  const opcode = pick(r, [0, 1, 2, 3, 7, 8, 9, 10, 11, 15]);
  const payload = randomBytes(pick(r, [0, 1, 2, 125, 126, 200, 5000]));
  const masked = int(r, 5) !== 0;
  const claimed = int(r, 6) === 0 ? payload.length + 1 + int(r, 1000) : payload.length;
  const head: number[] = [fin | rsv | opcode];
  const m = masked ? 0x80 : 0;
  if (claimed < 126) head.push(m | claimed);
  else if (claimed < 65536) head.push(m | 126, claimed >> 8, claimed & 0xff);
  else
    head.push(
      m | 127,
      0,
      0,
      0,
      0,
      (claimed >>> 24) & 0xff,
      (claimed >> 16) & 0xff,
      (claimed >> 8) & 0xff,
      claimed & 0xff,
    );
  const mask = masked ? randomBytes(4) : Buffer.alloc(0);
  return Buffer.concat([Buffer.from(head), mask, payload]);
}

describe('fuzz: WebSocket query and frames', () => {
  let demo: Demo;
  let token: string;
  let wsUrl: string;
  let watcher: StreamClient;
  const cap = capturingLogger();

  beforeAll(async () => {
    demo = await demoSite({ speed: 1, log: cap.log });
    token = await partnerToken(demo.credentials);
    wsUrl = `${demo.url.replace(/^http/, 'ws')}/ws`;
    watcher = await StreamClient.connect(`${wsUrl}?${GOOD}`, token);
  });
  afterAll(async () => {
    watcher?.close();
    await demo?.cleanup();
  });

  it('mutated query strings: a 400 with the error body before the upgrade, or a valid subscription', async () => {
    const r = rng(SEED + 10);
    const t = new Tally();
    const problems: string[] = [];
    const cases = 600 * SCALE;
    const one = async () => {
      const q =
        int(r, 4) === 0
          ? `${enc(junk(r))}=${enc(junk(r))}`
          : int(r, 2)
            ? mutateN(r, GOOD)
            : GOOD.split('&')
                .map((p) => (int(r, 3) ? p : mutateN(r, p)))
                .join('&');
      const o = await upgrade(`${wsUrl}?${q.replace(/[#\s]/g, '')}`, token);
      if (o.open) {
        t.add('upgraded');
        o.ws!.close();
        return;
      }
      t.add(o.status ? `${o.status}` : 'socket error');
      let body: { statusCode?: unknown; code?: unknown; message?: unknown } = {};
      try {
        body = JSON.parse(o.body ?? '');
      } catch {
        // reported below
      }
      if (
        !o.status ||
        o.status >= 500 ||
        body.statusCode !== o.status ||
        typeof body.code !== 'string' ||
        typeof body.message !== 'string'
      )
        problems.push(`?${q.slice(0, 200)} → ${o.status} ${o.body?.slice(0, 200)}`);
    };
    for (let i = 0; i < cases; i += 12) await Promise.all(Array.from({ length: Math.min(12, cases - i) }, one));
    console.log(t.line('WebSocket query'));
    expect(problems).toEqual([]);
    expect(t.counts.get('400') ?? 0).toBeGreaterThan(cases / 3);
  });

  it('frames after a valid upgrade: junk, binary, oversized, control frames and raw broken frames', async () => {
    const r = rng(SEED + 11);
    const t = new Tally();
    const problems: string[] = [];
    const conns = 150 * SCALE;
    for (let i = 0; i < conns; i++) {
      const o = await upgrade(`${wsUrl}?${GOOD}`, token);
      if (!o.open) {
        problems.push(`valid upgrade refused: ${o.status}`);
        continue;
      }
      const ws = o.ws!;
      const closed = new Promise<number>((res) => ws.once('close', (code) => res(code)));
      for (let k = 0; k < 8 && ws.readyState === WebSocket.OPEN; k++) {
        const kind = int(r, 8);
        t.add(['text', 'binary', 'oversized', 'ping', 'pong', 'close', 'raw', 'raw'][kind]!);
        if (kind === 0) ws.send(int(r, 2) ? JSON.stringify(jsonJunk(r)) : junk(r, 300));
        else if (kind === 1) ws.send(randomBytes(int(r, 4000)));
        else if (kind === 2) ws.send(Buffer.alloc(4097 + int(r, 100_000), 0x61));
        else if (kind === 3) ws.ping(randomBytes(int(r, 126)));
        else if (kind === 4) ws.pong(randomBytes(int(r, 126)));
        else if (kind === 5) ws.close(pick(r, [1000, 1001, 3000, 4999]), junk(r, 20).slice(0, 20));
        else (ws as unknown as { _socket: { write(b: Buffer): void } })._socket.write(rawFrame(r));
        await new Promise((res) => setImmediate(res));
      }
      if (ws.readyState === WebSocket.OPEN) ws.close();
      const code = await Promise.race([closed, new Promise<number>((res) => setTimeout(() => res(-1), 3000))]);
      if (code === -1) ws.terminate();
      t.add(`closed ${code}`);
    }
    console.log(t.line('WebSocket frames (8 a connection)'));
    expect(problems).toEqual([]);
  });

  it('afterwards: a new client is let in, the watcher is still connected, healthy, nothing logged as failed', async () => {
    const fresh = await StreamClient.connect(`${wsUrl}?${GOOD}`, token);
    fresh.close();
    expect(watcher.closed).toBeNull();
    expect((await fetch(`${demo.url}/healthz`)).status).toBe(200);
    const failed = cap.lines().filter((l) => (l.level as number) >= 50);
    expect(failed.map((l) => `${String(l.msg)}: ${JSON.stringify(l.err).slice(0, 800)}`)).toEqual([]);
    console.log(
      '[fuzz] after the WebSocket fuzz: a new client let in, the watcher still connected, /healthz 200, 0 errors logged',
    );
  });
});
