/**
 * Malformed request lines and upgrade requests at a running daemon (`sitegw demo` in its own
 * process, raw TCP): the targets of issue 14 (`//` and `/\` killed the process through the
 * WebSocket upgrade), absolute and authority forms, `*`, 64 KiB paths, percent-encoding garbage,
 * control characters, CR/LF injection, bad methods and HTTP versions, broken handshake headers,
 * each with and without the upgrade headers and with no, a bad or a valid token; then a seeded
 * random mix of all of them, bounded by attackCount.
 * What must hold after every request and at the end: the process is alive, /healthz answers,
 * no answer is a 5xx, a refused upgrade carries the API's error body, and nothing is logged as
 * an error.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { int, pick, type Rng, rng, SEED } from '../fuzz/gen.js';
import { expectNoSecrets } from '../support/attack-log.js';
import { attackCount } from '../support/attack-scale.js';
import { partnerToken } from '../support/auth.js';
import { type ChildDemo, childDemo, logLines } from '../support/child-daemon.js';

const LONG = 64 * 1024;
const TARGETS = [
  '//',
  '/\\',
  '/\\\\evil',
  '//evil.example/ws',
  '///ws',
  'http://x/ws',
  'ws://h:1/ws?streams=grid-events',
  'https://gateway/ws?streams=telemetry-realtime',
  'http://[::1/ws',
  'h:1',
  'gateway:8080',
  '*',
  '',
  '?',
  '#',
  '\\ws',
  `/${'a'.repeat(LONG)}`,
  `/ws?streams=${'grid-events,'.repeat(LONG / 12)}`,
  `/${'%2f'.repeat(LONG / 3)}`,
  '/%zz',
  '/%00',
  '/ws%00',
  '/%c0%af',
  '/%2e%2e/%2e%2e/etc/passwd',
  '/ws?streams=%zz',
  '/ws?streams=grid-events%00',
  `/ws?streams=${'%'.repeat(1000)}`,
  '/ws?streams=grid-events&streams=grid-events',
  '/ws?=&&==',
  '/ws?streams[]=x',
  '/ws?__proto__=1&constructor=2',
  '/ws?streams=telemetry-realtime&telemetryDevices=%ff%fe',
  '/ws/../ws',
  '/./ws',
  '/ws/',
  '/WS',
  '/ws#frag',
  '/\u0000',
  '/\u007f',
  '/\u001b[31m',
  '/\u00e9',
  '/ws\tx',
  ' /ws',
  '/ws?streams=grid-events\r\nX-Injected: 1',
  '/ws HTTP/1.1\r\nHost: x',
  '/healthz\r\n\r\nGET //',
  '/ws\r\n\r\n',
];
const METHODS = [
  'GET',
  'GET',
  'GET',
  'POST',
  'PUT',
  'DELETE',
  'OPTIONS',
  'HEAD',
  'TRACE',
  'CONNECT',
  'PATCH',
  'GETT',
  'get',
  'G\u0000T',
  'PRI',
  'M-SEARCH',
  '',
];
const VERSIONS = [
  'HTTP/1.1',
  'HTTP/1.1',
  'HTTP/1.1',
  'HTTP/1.0',
  'HTTP/2.0',
  'HTTP/0.9',
  'HTTP/9.9',
  'HTTX/1.1',
  'HTTP/1.1x',
  'http/1.1',
  '',
];
const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';
const UPGRADES: (Record<string, string> | null)[] = [
  null,
  { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': KEY, 'Sec-WebSocket-Version': '13' },
  { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Version': '13' },
  { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': 'x', 'Sec-WebSocket-Version': '13' },
  { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': 'a'.repeat(200), 'Sec-WebSocket-Version': '13' },
  { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': KEY },
  { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': KEY, 'Sec-WebSocket-Version': '12' },
  { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': KEY, 'Sec-WebSocket-Version': 'abc' },
  {
    Upgrade: 'websocket',
    Connection: 'Upgrade',
    'Sec-WebSocket-Key': KEY,
    'Sec-WebSocket-Version': '13',
    'Sec-WebSocket-Extensions': 'permessage-deflate; ;;=',
  },
  {
    Upgrade: 'websocket',
    Connection: 'Upgrade',
    'Sec-WebSocket-Key': KEY,
    'Sec-WebSocket-Version': '13',
    'Sec-WebSocket-Protocol': ',,',
  },
  { Upgrade: 'h2c', Connection: 'Upgrade, HTTP2-Settings', 'HTTP2-Settings': '' },
  {
    Upgrade: 'websocket\r\nX-Injected: 1',
    Connection: 'Upgrade',
    'Sec-WebSocket-Key': KEY,
    'Sec-WebSocket-Version': '13',
  },
];
const FULL_UPGRADE = UPGRADES[1]!;
/** the messages of fastify's defaultClientErrorHandler, which answers what the HTTP parser refused */
const PARSER_REFUSALS = ['Client Error', 'Exceeded maximum allowed HTTP header size'];

interface Case {
  method: string;
  target: string;
  version: string;
  upgrade: Record<string, string> | null;
  token: 'none' | 'bad' | 'good';
}

interface Answer {
  /** the first bytes, to name the case in a failure */
  head: string;
  status: number | null;
  body: string;
}

function render(c: Case, token: string): Buffer {
  const headers: Record<string, string> = { Host: 'gateway', ...(c.upgrade ?? { Connection: 'close' }) };
  if (c.token === 'good') headers.Authorization = `Bearer ${token}`;
  if (c.token === 'bad') headers.Authorization = 'Bearer sgw_at_\u0001nothing';
  const line = [c.method, c.target, c.version].filter((p) => p !== '').join(' ');
  const text = `${line}\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
  return Buffer.from(text, 'utf8');
}

/**
 * One request on its own connection. The write side is closed after it unless the request may be
 * upgraded, so the daemon answers and closes; a 101 ends the exchange as soon as its head is in.
 */
function exchange(port: number, bytes: Buffer, mayUpgrade: boolean): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      const split = text.indexOf('\r\n\r\n');
      // the first answer's body only: a target that smuggles a second request line in gets that
      // one's answer (node's 400) after the first on the same connection, as HTTP/1.1 pipelining does
      const length = /\r\ncontent-length: (\d+)\r\n/i.exec(text.slice(0, split));
      const body = split < 0 ? '' : text.slice(split + 4);
      resolve({
        head: text.slice(0, 200),
        status: m ? Number(m[1]) : null,
        body: length ? body.slice(0, Number(length[1])) : body,
      });
    };
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      if (Buffer.concat(chunks).toString('latin1').startsWith('HTTP/1.1 101 ')) {
        socket.destroy();
        done();
      }
    });
    socket.on('close', done);
    // a reset after the answer (the daemon closing a request it will not read) is still an answer
    socket.on('error', (e: NodeJS.ErrnoException) =>
      e.code === 'ECONNREFUSED' ? reject(new Error('the daemon no longer listens')) : undefined,
    );
    socket.write(bytes);
    if (!mayUpgrade) socket.end();
  });
}

function randomCase(r: Rng): Case {
  return {
    method: int(r, 3) === 0 ? pick(r, METHODS) : 'GET',
    target: pick(r, TARGETS),
    version: int(r, 3) === 0 ? pick(r, VERSIONS) : 'HTTP/1.1',
    upgrade: pick(r, UPGRADES),
    token: pick(r, ['none', 'none', 'bad', 'good'] as const),
  };
}

describe('attack: malformed request lines and upgrade requests', () => {
  let d: ChildDemo;
  let port: number;
  let token: string;

  beforeAll(async () => {
    d = await childDemo({ env: { SITEGW_LOG_LEVEL: 'debug' } });
    port = Number(new URL(d.url).port);
    token = await partnerToken(d.credentials);
  });
  afterAll(async () => {
    const out = d?.out() ?? '';
    await d?.cleanup();
    expectNoSecrets(out.split('\n').filter((l) => l.startsWith('{')));
  });

  const healthy = async (after: string) => {
    expect(d.alive(), `the daemon exited after ${after}: ${d.err().slice(-2000)}`).toBe(true);
    const h = await exchange(
      port,
      Buffer.from('GET /healthz HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n'),
      false,
    );
    expect(h.status, `/healthz after ${after}`).toBe(200);
  };

  const attack = async (c: Case) => {
    const name = JSON.stringify({
      ...c,
      target: c.target.length > 120 ? `${c.target.slice(0, 120)}… (${c.target.length})` : c.target,
    });
    const a = await exchange(port, render(c, token), c.upgrade !== null && c.token === 'good').catch((e: Error) => {
      throw new Error(`${name}: ${e.message}`);
    });
    if (a.status !== null) expect(a.status, `${name} answered ${a.head}`).toBeLessThan(500);
    // a refused upgrade comes in the API's error shape; what node's HTTP parser refuses before any
    // handler sees it gets fastify's default client-error body (its clientErrorHandler) instead
    const body = a.head.includes('application/json') ? (JSON.parse(a.body) as Record<string, unknown>) : null;
    if (
      a.status !== null &&
      a.status >= 400 &&
      c.upgrade === FULL_UPGRADE &&
      body &&
      !PARSER_REFUSALS.includes(String(body.message))
    ) {
      expect(Object.keys(body).sort(), name).toEqual(['code', 'error', 'message', 'statusCode']);
    }
    await healthy(name);
    return a;
  };

  it('every listed target, as a plain GET and as a full upgrade with no token, leaves the daemon serving', async () => {
    const statuses = new Map<string, number>();
    for (const target of TARGETS) {
      for (const upgrade of [null, FULL_UPGRADE]) {
        const a = await attack({ method: 'GET', target, version: 'HTTP/1.1', upgrade, token: 'none' });
        statuses.set(String(a.status), (statuses.get(String(a.status)) ?? 0) + 1);
      }
    }
    // the daemon read them: most were answered (a few, like CONNECT, are closed unanswered)
    expect(statuses.get('null') ?? 0).toBeLessThan(TARGETS.length);
  });

  it('the issue 14 request: GET // with a full upgrade is refused with 400 and the error body', async () => {
    for (const target of ['//', '/\\']) {
      const a = await attack({ method: 'GET', target, version: 'HTTP/1.1', upgrade: FULL_UPGRADE, token: 'none' });
      expect(a.status).toBe(400);
      expect(JSON.parse(a.body)).toMatchObject({ statusCode: 400, code: 'BAD_REQUEST' });
    }
  });

  it(`a seeded mix of methods, targets, versions, handshake headers and tokens (${attackCount(150)} requests)`, async () => {
    const r = rng(SEED);
    for (let i = 0; i < attackCount(150); i++) await attack(randomCase(r));
  });

  it('at the end the daemon still serves, lets a good stream client in, and logged no error', async () => {
    await healthy('the whole run');
    const ok = await exchange(
      port,
      render(
        { method: 'GET', target: '/ws?streams=grid-events', version: 'HTTP/1.1', upgrade: FULL_UPGRADE, token: 'good' },
        token,
      ),
      true,
    );
    expect(ok.status).toBe(101);
    const errors = logLines(d.out()).filter((l) => Number(l.level) >= 50);
    expect(errors).toEqual([]);
    // refused upgrades are logged with the client's address, but not one line each
    const refused = logLines(d.out()).filter((l) => l.msg === 'refused' && l.upgrade === true);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]).toMatchObject({ remote: '127.0.0.1' });
    expect(refused.length).toBeLessThan(TARGETS.length);
  });
});
