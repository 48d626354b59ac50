/**
 * Answers nobody reads (issue 26 finding 1): `sitegw demo` in its own process, with the node
 * flags of systemd/sitegw.service and a 256 MB heap, gets 16 connections each carrying 1,600
 * pipelined GET /openapi.json that are never read, then 32 connections each asking for a
 * ~8 MB telemetry answer (400 days of PT15M) and reading only its first bytes. Before the fix
 * the first killed the process (V8 heap limit, exit 134) and the second held every answer whole.
 * What must hold: the process lives, its resident memory stays under RSS_BOUND_MIB, and
 * /healthz answers within a second afterwards (a timeout on the request, not a measurement).
 */
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteDriver } from '../../src/store/driver.js';
import { expectNoSecrets } from '../support/attack-log.js';
import { attackCount } from '../support/attack-scale.js';
import { partnerToken } from '../support/auth.js';
import { type ChildDemo, childDemo, logLines } from '../support/child-daemon.js';
import { unitRuntime } from '../support/unit-runtime.js';

/** the bound docs/security.md states for the daemon's resident memory under these attacks */
const RSS_BOUND_MIB = 200;
const HEAP_MIB = 256;
const DAY_S = 86_400;
const STREAM = 'battery-1';

/** The child's resident memory, MiB (Linux /proc). */
function rssMib(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return kb / 1024;
}

/**
 * A connection that sends `bytes` and reads nothing, or only its first chunk when `peek`.
 * `first` settles at that chunk, or once the daemon has closed the connection: a socket that
 * reads nothing sees no end, so it writes an empty line (which HTTP skips between requests)
 * every 50 ms until a write fails.
 */
function unread(port: number, bytes: string, peek = false): Promise<{ socket: Socket; first: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    const first = new Promise<void>((r) => {
      socket.once('close', () => r());
      if (peek)
        socket.once('data', () => {
          socket.pause();
          r();
        });
    });
    if (!peek) {
      socket.pause();
      const probe = setInterval(() => socket.destroyed || socket.write('\r\n'), 50);
      void first.then(() => clearInterval(probe));
    }
    socket.once('connect', () => {
      socket.write(bytes);
      resolve({ socket, first });
    });
    socket.once('error', reject);
  });
}

/** GET /healthz on a fresh connection, refused if no answer comes within `ms`. */
function healthz(port: number, ms = 1000): Promise<number> {
  return new Promise((resolve, reject) => {
    // from another address than the attack's, as an installer's box would ask
    const socket = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' });
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`/healthz: no answer within ${ms} ms`));
    }, ms);
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (m) {
        clearTimeout(timer);
        socket.destroy();
        resolve(Number(m[1]));
      }
    });
    socket.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.write('GET /healthz HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n');
  });
}

describe('attack: answers that are never read', () => {
  let d: ChildDemo;
  let port: number;
  let peak = 0;
  let sampler: NodeJS.Timeout;
  const sample = () => {
    if (d.alive()) peak = Math.max(peak, rssMib(d.child.pid!));
  };

  beforeAll(async () => {
    const runtime = unitRuntime();
    d = await childDemo({
      nodeArgs: [...runtime.args, `--max-old-space-size=${HEAP_MIB}`],
      env: { ...runtime.env, SITEGW_LOG_LEVEL: 'debug' },
    });
    port = Number(new URL(d.url).port);
    sampler = setInterval(sample, 20);
  }, 90_000);
  /** Once every attacking connection got its first answer or was closed: alive, within memory, /healthz after. */
  async function holds(opening: Promise<{ socket: Socket; first: Promise<void> }>[]): Promise<void> {
    const conns = await Promise.all(opening);
    await Promise.race([Promise.all(conns.map((c) => c.first)), d.exit]);
    sample();
    expect(d.alive(), `the daemon exited: ${d.err().slice(-1500)}`).toBe(true);
    expect(peak, 'peak resident memory, MiB').toBeLessThan(RSS_BOUND_MIB);
    // afterwards: the attacker hangs up, and the next request is answered at once
    for (const c of conns) c.socket.destroy();
    expect(await healthz(port)).toBe(200);
  }

  afterAll(async () => {
    clearInterval(sampler);
    const out = d?.out() ?? '';
    await d?.cleanup();
    expectNoSecrets(out.split('\n').filter((l) => l.startsWith('{')));
  });

  it(`${attackCount(16, 4)} connections × 1,600 pipelined GET /openapi.json, never read: the daemon lives within its memory bound`, {
    timeout: 60_000,
  }, async () => {
    const request = 'GET /openapi.json HTTP/1.1\r\nHost: g\r\n\r\n'.repeat(1600);
    // the daemon closes each once it has more requests in flight than it allows (or dies trying)
    await holds(Array.from({ length: attackCount(16, 4) }, () => unread(port, request)));
  });

  it(`${attackCount(32, 4)} connections each asking for an ~8 MB telemetry answer and not reading it: within the bound`, {
    timeout: 90_000,
  }, async () => {
    // 400 days of quarter hours for one battery, written beside the running daemon (WAL)
    const Driver = sqliteDriver();
    const db = new Driver(join(d.dataDir, 'sitegw.db'));
    db.pragma('busy_timeout = 10000');
    const end = Math.floor(Date.now() / 1000 / DAY_S) * DAY_S - DAY_S;
    const start = end - 400 * DAY_S;
    db.prepare(
      `WITH RECURSIVE t(s) AS (SELECT ? UNION ALL SELECT s + 900 FROM t WHERE s + 900 < ?)
       INSERT OR REPLACE INTO buckets (stream, start_s, covered_ms, power_W, soc, soh, energy_in, energy_out, state)
       SELECT (SELECT id FROM streams WHERE key = ?), s, 900000, -1234.56, 55.5, 98.25, 12345.5, -23456.5, 'charging' FROM t`,
    ).run(start, end, STREAM);
    db.close();
    const token = await partnerToken(d.credentials);
    const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000', '');
    const path = `/api/v1/devices/${STREAM}/telemetry?interval=${iso(start)}/${iso(end)}&include=default,energy`;
    const request = `GET ${path} HTTP/1.1\r\nHost: g\r\nAuthorization: Bearer ${token}\r\n\r\n`;

    // the answer is that large: one client reads it whole
    const whole = await new Promise<number>((resolve, reject) => {
      const s = connect(port, '127.0.0.1');
      let n = 0;
      s.on('data', (b: Buffer) => void (n += b.length));
      s.on('error', reject);
      s.write(`GET ${path} HTTP/1.1\r\nHost: g\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`);
      s.on('close', () => resolve(n));
    });
    expect(whole).toBeGreaterThan(7_500_000);

    peak = 0;
    await holds(Array.from({ length: attackCount(32, 4) }, () => unread(port, request, true)));
  });

  it('logged no error, and no token, secret or code', () => {
    const lines = logLines(d.out());
    expect(lines.filter((l) => Number(l.level) >= 50)).toEqual([]);
    expectNoSecrets(
      d
        .out()
        .split('\n')
        .filter((l) => l.startsWith('{')),
    );
  });
});
