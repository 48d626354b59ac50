/**
 * A telemetry answer of up to 1 MiB joined from kept days is written by `sendViews`
 * (src/api/http/telemetry-body.ts), which takes the reply over from fastify. On the real daemon:
 * - its header block is the one fastify's own send writes for the same route (names, order,
 *   values; only content-length and date differ), for GET, HEAD and `Connection: close`;
 * - the request gate (src/api/http/request-gate.ts) counts its unread bytes as it counts a
 *   normal answer's: a host pipelining 30-day questions it never reads is refused exactly when
 *   the bytes of the answers it holds pass limits.http.maxUnsentMiB, /openapi.json answers
 *   (fastify's send) mixed in, and another host is served meanwhile;
 * - clients that hang up on pipelined 30-day questions leave no connection or error behind.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import Fastify from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendViews } from '../../src/api/http/telemetry-body.js';
import { type BucketRow, insertBuckets } from '../../src/store/buckets.js';
import { findStreamKey } from '../../src/store/streams.js';
import { partnerToken } from '../support/auth.js';
import { bucketRow } from '../support/bucket-row.js';
import { demoSite, waitFor } from '../support/demo.js';

const DAY = 86_400_000;
const BUDGET_MIB = 2;

let demo: Awaited<ReturnType<typeof demoSite>>;
let token: string;
let path: string;
let firstDay: number;
const logged: { level: number; msg: string }[] = [];

/** the path of 30 days of PT15M starting `quarters` quarter hours after the first filled day: each a question not asked before */
const month = (quarters = 0) => {
  const s = firstDay + quarters * 900_000;
  return `${path}?interval=${new Date(s).toISOString()}/${new Date(s + 30 * DAY).toISOString()}&include=default,energy`;
};
const oneDay = () =>
  `${path}?interval=${new Date(firstDay).toISOString()}/${new Date(firstDay + DAY).toISOString()}&include=default,energy`;

beforeAll(async () => {
  const log = pino(
    { level: 'info' },
    {
      write: (line: string) => {
        const l = JSON.parse(line) as { level: number; msg: string };
        logged.push(l);
      },
    },
  );
  demo = await demoSite({
    speed: 1,
    log,
    configure: (c) => void (c.limits.http.maxUnsentMiB = BUDGET_MIB),
  });
  token = await partnerToken(demo.credentials);
  const grid = demo.daemon.site.streams().find((s) => s.id.endsWith('__GRID_METER_DERIVED'));
  if (!grid) throw new Error('the demo site has no grid stream');
  path = `/api/v1/devices/${encodeURIComponent(grid.id)}/telemetry`;
  // 33 closed days of the grid meter before today, through the store as the bucketer writes them
  const db = demo.daemon.ctx.db;
  const stream = await waitFor('the grid stream in the store', () => findStreamKey(db, grid.id));
  firstDay = Math.floor(Date.now() / DAY) * DAY - 33 * DAY;
  const rows: BucketRow[] = [];
  for (let i = 0; i < 33 * 96; i++)
    rows.push(
      bucketRow({
        stream,
        startS: firstDay / 1000 + i * 900,
        power_W: ((i * 37) % 2000) - 1000 + 0.25,
        energyIn: 1_000_000 + i * 125.5,
        energyOut: -500_000 - i * 60.25,
      }),
    );
  insertBuckets(db, rows);
}, 60_000);
afterAll(async () => demo?.cleanup());

interface Answer {
  status: number;
  /** the header lines as sent, in order, without the status line */
  lines: string[];
  body: Buffer;
  /** its bytes on the wire: status line, headers, blank line, body */
  bytes: number;
}

/** Parses HTTP/1.1 answers with a content-length (or none, for HEAD) out of `bytes`. */
function parseAnswers(bytes: Buffer, heads: boolean[] = []): Answer[] {
  const out: Answer[] = [];
  let at = 0;
  while (at < bytes.length) {
    const end = bytes.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const [statusLine, ...lines] = bytes.subarray(at, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine!)?.[1]);
    const length = Number(lines.find((l) => /^content-length:/i.test(l))?.split(':')[1] ?? 0);
    const bodyLength = heads[out.length] ? 0 : length;
    out.push({ status, lines, body: bytes.subarray(end + 4, end + 4 + bodyLength), bytes: end + 4 + bodyLength - at });
    at = end + 4 + bodyLength;
  }
  return out;
}

/** Sends `requests` on one connection and reads until it has `n` answers (or the connection ends). */
function exchange(requests: string, n: number, heads: boolean[] = []): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const s = connect(Number(new URL(demo.url).port), '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => {
      s.destroy();
      resolve(parseAnswers(Buffer.concat(chunks), heads));
    };
    s.on('data', (d: Buffer) => {
      chunks.push(d);
      const got = parseAnswers(Buffer.concat(chunks), heads);
      if (got.length >= n && got.every((a, i) => a.body.length === bodyLength(a, heads[i]))) done();
    });
    s.on('end', done);
    s.on('error', reject);
    s.write(requests);
  });
}
const bodyLength = (a: Answer, head?: boolean) =>
  head ? 0 : Number(a.lines.find((l) => /^content-length:/i.test(l))?.split(':')[1] ?? 0);

const get = (p: string, extra = '', method = 'GET') =>
  `${method} ${p} HTTP/1.1\r\nHost: g\r\nAuthorization: Bearer ${token}\r\n${extra}\r\n`;

/** the header lines with the date's value and content-length's value blanked */
const shape = (lines: string[]) =>
  lines.map((l) => l.replace(/^(date|content-length): .*$/i, (_m, name: string) => `${name}: *`));

describe('a 30-day answer written from kept days', () => {
  it('carries the header block fastify writes for the same route, for GET, HEAD and Connection: close', async () => {
    const [whole, normal, head, after] = await exchange(
      get(month()) + get(oneDay()) + get(month(), '', 'HEAD') + get(oneDay()),
      4,
      [false, false, true, false],
    );
    for (const a of [whole, normal, head, after]) expect(a!.status).toBe(200);
    const wholeBody = JSON.parse(whole!.body.toString('utf8')) as { entries: { start: string }[] };
    expect(wholeBody.entries.length).toBe(30 * 96);
    expect(whole!.body.length).toBeGreaterThan(500_000);
    // the one-day answer goes through fastify's send (the answer cache), the month does not
    expect(shape(whole!.lines)).toEqual(shape(normal!.lines));
    expect(whole!.lines.find((l) => l.startsWith('content-length'))).toBe(`content-length: ${whole!.body.length}`);
    // HEAD: the same header block, the same length announced, no body (the next answer parses)
    expect(head!.lines).toEqual(
      whole!.lines.map((l, i) => (l.startsWith('date:') ? head!.lines[i]! : l)).map((l) => l),
    );
    expect(after!.body.toString('utf8')).toBe(normal!.body.toString('utf8'));

    const [closing] = await exchange(get(month(1), 'Connection: close\r\n'), 1);
    const [closingNormal] = await exchange(get(oneDay(), 'Connection: close\r\n'), 1);
    expect(closing!.lines.map((l) => l.toLowerCase())).toContain('connection: close');
    expect(shape(closing!.lines)).toEqual(shape(closingNormal!.lines));
  });

  it('its unread bytes count against maxUnsentMiB like a normal answer: the host is refused exactly past the budget, another host is served', async () => {
    const server = demo.daemon.app.server;
    // a host that never takes its answers: everything written stays in the daemon (the kernel
    // buffers of a loopback socket would take megabytes first, and how many is not fixed)
    const hostile = new HeldSocket('192.0.2.7', 40_001);
    server.emit('connection', hostile);
    // fresh 30-day questions (the hijacked write) and /openapi.json (fastify's send) in turn,
    // within the per-connection pipelining limit
    const kinds = Array.from({ length: 14 }, (_, i) => (i % 2 === 0 ? 'month' : 'openapi'));
    let req = '';
    kinds.forEach((k, i) => {
      req += k === 'month' ? get(month(100 + i)) : 'GET /openapi.json HTTP/1.1\r\nHost: g\r\n\r\n';
    });
    const handled: ServerResponse[] = [];
    const onRequest = (r: IncomingMessage, res: ServerResponse) =>
      (r.socket as unknown) === hostile && handled.push(res);
    server.on('request', onRequest);
    hostile.push(req);
    await waitFor(
      'every question answered and held',
      () => handled.length === kinds.length && handled.every((r) => r.headersSent),
    );
    server.off('request', onRequest);

    // meanwhile a partner on another address is served, the month included
    const [partner] = await exchange(get(month(200)), 1);
    expect(partner!.status).toBe(200);

    hostile.release();
    const answers = await waitFor('the held answers up to the first 503', () => {
      const a = parseAnswers(hostile.written());
      const busy = a.findIndex((x) => x.status === 503);
      return busy >= 0 && a.length > busy && a;
    });
    // the daemon closed the connection after its first 503 (connection: close)
    const firstBusy = answers.findIndex((a) => a.status === 503);
    expect(firstBusy, 'the host was refused at some point').toBeGreaterThan(0);
    const budget = BUDGET_MIB * 1024 * 1024;
    // the gate refuses a request once the bytes of the answers written before it pass the budget:
    // every answer before the first 503 was written while the sum of the earlier ones was within it
    let held = 0;
    for (let i = 0; i < firstBusy; i++) {
      expect(held, `answer ${i} (${kinds[i]}) was written over the budget`).toBeLessThanOrEqual(budget);
      held += answers[i]!.bytes;
    }
    expect(held, 'the first 503 came before the budget was passed').toBeGreaterThan(budget);
    // both kinds were among the answers held, and the month's were whole
    expect(kinds.slice(0, firstBusy)).toContain('openapi');
    const months = answers.slice(0, firstBusy).filter((_, i) => kinds[i] === 'month');
    expect(months.length).toBeGreaterThan(0);
    for (const m of months) expect(JSON.parse(m.body.toString('utf8')).entries.length).toBe(30 * 96);
    // what the host could make the daemon hold: the budget and one answer
    expect(held).toBeLessThan(budget + 1024 * 1024);
    hostile.destroy();
  });

  it('clients hanging up on pipelined 30-day questions leave no connection, no open answer and no error behind', async () => {
    const port = Number(new URL(demo.url).port);
    const server = demo.daemon.app.server;
    const sockets: Socket[] = [];
    for (let c = 0; c < 8; c++) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      let req = '';
      for (let i = 0; i < 6; i++) req += get(month(300 + c * 10 + i));
      s.once('connect', () => {
        s.write(req);
        // half hang up as soon as the first bytes come, half reset at once
        if (c % 2 === 0) s.once('data', () => s.resetAndDestroy());
        else setImmediate(() => s.resetAndDestroy());
      });
      sockets.push(s);
    }
    await waitFor('every client gone', () => sockets.every((s) => s.destroyed));
    const open = () => new Promise<number>((r) => server.getConnections((_e, n) => r(n)));
    await waitFor('the daemon closed them all', async () => (await open()) === 0);
    // and the next question is answered
    const [next] = await exchange(get(month(400)), 1);
    expect(next!.status).toBe(200);
    expect(logged.filter((l) => l.level >= 50)).toEqual([]);
  });
});

/**
 * A connection that takes nothing: node's HTTP server writes into it and every write waits, so
 * all answer bytes stay in the daemon, where the gate counts them. `release` takes them all.
 */
class HeldSocket extends Duplex {
  readonly remoteFamily = 'IPv4';
  private readonly chunks: Buffer[] = [];
  private readonly waiting: (() => void)[] = [];
  private open = true;

  constructor(
    readonly remoteAddress: string,
    readonly remotePort: number,
  ) {
    super();
  }

  override _read(): void {}

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.chunks.push(Buffer.from(chunk));
    if (this.open) this.waiting.push(() => cb());
    else cb();
  }

  /** lets every write through, from now on too */
  release(): void {
    this.open = false;
    while (this.waiting.length > 0) this.waiting.shift()!();
  }

  written(): Buffer {
    return Buffer.concat(this.chunks);
  }

  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
}

describe('sendViews on a real socket, when things go wrong after the reply is taken over', () => {
  const views = [Buffer.from('{"entries":['), Buffer.from('{"p":1}'), Buffer.from(']}')];

  it('a socket already destroyed when the views are written: no crash, no error event left unhandled, the server goes on', async () => {
    const app = Fastify();
    let finished = 0;
    app.addHook('onResponse', (_req, _reply, done) => {
      finished++;
      done();
    });
    app.get('/gone', async (req, reply) => {
      req.raw.socket.destroy();
      return sendViews(reply, views);
    });
    app.get('/bad', async (_req, reply) => sendViews(reply.header('x-bad', 'a\nb'), views));
    app.get('/ok', async (_req, reply) => sendViews(reply, views));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    const ask = (p: string) =>
      new Promise<string>((resolve) => {
        const s = connect(port, '127.0.0.1');
        let text = '';
        s.on('data', (d: Buffer) => (text += d.toString('latin1')));
        s.on('error', () => undefined);
        s.on('close', () => resolve(text));
        s.write(`GET ${p} HTTP/1.1\r\nHost: g\r\nConnection: close\r\n\r\n`);
      });
    try {
      // the client sees the connection end, without an answer
      expect(await ask('/gone')).toBe('');
      // a header node refuses, found once the reply is taken over: a 500 with the error body, not an open response
      const bad = await ask('/bad');
      expect(bad).toMatch(/^HTTP\/1\.1 500 /);
      expect(bad).toContain('"code":"INTERNAL_ERROR"');
      expect(bad.toLowerCase()).not.toContain('x-bad');
      const ok = await ask('/ok');
      expect(ok).toMatch(/^HTTP\/1\.1 200 /);
      expect(ok.endsWith('{"entries":[{"p":1}]}')).toBe(true);
      expect(finished).toBeGreaterThanOrEqual(2);
      const open = await new Promise<number>((r) => app.server.getConnections((_e, n) => r(n)));
      expect(open).toBe(0);
    } finally {
      await app.close();
    }
  });
});
