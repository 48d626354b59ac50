/**
 * One bucket of 1,000 entries pushed to 500 connected WebSocket clients: time until the last
 * client has its last message, and the gateway's memory meanwhile. Baseline in the same run: a
 * bare `ws` server sending the same number of pre-built messages of the same size to 500
 * clients. The clients live in a child process so their work and memory are not the gateway's.
 *
 *   node --expose-gc --import tsx bench/ws-push.ts [clients] [entries]
 */
import { fork } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import WebSocket, { WebSocketServer } from 'ws';
import { type WsAccess, WsServer } from '../src/api/ws/server.js';
import { type ClosedBucket, EventBus } from '../src/core/events.js';
import { silentLogger } from '../src/core/log.js';
import type { StreamDef } from '../src/core/streams.js';
import { median } from './lib/stats.js';

const CLIENTS = Number(process.argv[2] ?? 500);
const ENTRIES = Number(process.argv[3] ?? 1000);
const PER_MESSAGE = 100;
const MESSAGES = Math.ceil(ENTRIES / PER_MESSAGE);

if (process.env.BENCH_ROLE === 'clients') {
  // child: open the connections, report when every client has every message of a round
  const url = process.env.BENCH_URL!;
  const sockets: WebSocket[] = [];
  let done = 0;
  let lastAt = 0;
  const counts = new Array<number>(CLIENTS).fill(0);
  for (let i = 0; i < CLIENTS; i++) {
    const ws = new WebSocket(url, { headers: { authorization: 'Bearer bench' } });
    ws.on('message', () => {
      if (++counts[i]! === MESSAGES) {
        lastAt = performance.timeOrigin + performance.now();
        if (++done === CLIENTS) process.send!({ kind: 'round', lastAt });
      }
    });
    sockets.push(ws);
  }
  Promise.all(sockets.map((s) => new Promise((r) => s.once('open', r)))).then(() => process.send!({ kind: 'ready' }));
  process.on('message', (m: { kind: string }) => {
    if (m.kind === 'reset') {
      counts.fill(0);
      done = 0;
      process.send!({ kind: 'reset' });
    }
    if (m.kind === 'exit') process.exit(0);
  });
} else {
  await main();
}

async function listen(): Promise<{ server: Server; port: number }> {
  const server = createServer((_q, s) => s.end());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

function clients(url: string) {
  const child = fork(fileURLToPath(import.meta.url), [String(CLIENTS), String(ENTRIES)], {
    env: { ...process.env, BENCH_ROLE: 'clients', BENCH_URL: url },
    execArgv: ['--import', 'tsx'],
  });
  const next = (kind: string) =>
    new Promise<{ lastAt?: number }>((r) =>
      child.on('message', function on(m: { kind: string; lastAt?: number }) {
        if (m.kind === kind) {
          child.off('message', on);
          r(m);
        }
      }),
    );
  return { child, next };
}

interface Run {
  ms: number[];
  peakRssMB: number;
  peakHeapMB: number;
  baseRssMB: number;
}

async function measure(push: () => void, url: string, rounds: number): Promise<Run> {
  const c = clients(url);
  await c.next('ready');
  const mem = () => process.memoryUsage();
  (globalThis as { gc?: () => void }).gc?.();
  const base = mem();
  let peakRss = base.rss;
  let peakHeap = base.heapUsed;
  const sampler = setInterval(() => {
    const m = mem();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  }, 5);
  const ms: number[] = [];
  for (let r = 0; r < rounds; r++) {
    c.child.send({ kind: 'reset' });
    await c.next('reset');
    const t0 = performance.timeOrigin + performance.now();
    const round = c.next('round');
    push();
    const { lastAt } = await round;
    ms.push(lastAt! - t0);
  }
  clearInterval(sampler);
  c.child.send({ kind: 'exit' });
  await new Promise((r) => c.child.once('exit', r));
  return { ms, peakRssMB: peakRss / 2 ** 20, peakHeapMB: peakHeap / 2 ** 20, baseRssMB: base.rss / 2 ** 20 };
}

async function main(): Promise<void> {
  const rounds = 7;
  const streams = new Map<string, StreamDef>();
  for (let i = 0; i < ENTRIES; i++)
    streams.set(`s${i}`, {
      id: `s${i}`,
      deviceId: `dev${i % 50}`,
      deviceKind: 'battery_pack',
      channels: ['power_W', 'soc', 'energy_Wh_increment', 'energy_Wh_decrement'],
    });
  const devices = new Set([...streams.values()].map((s) => s.deviceId));
  const access: WsAccess = {
    authenticate: () => ({ ok: true, principal: { clientId: 'bench' } }),
    recheck: () => null,
    partnerDevices: () => devices,
    customerDevices: () => new Set(),
  };
  const start = Date.parse('2026-11-23T10:00:00Z');
  const buckets: ClosedBucket[] = [...streams.keys()].map((id, i) => ({
    streamId: id,
    start,
    end: start + 900_000,
    values: { power_W: 1234.56 + i, soc: 55.5, energy_Wh_increment: 123456.78, energy_Wh_decrement: -98765.43 },
  }));

  // the gateway
  const g = await listen();
  const bus = new EventBus();
  const gateway = new WsServer(g.server, bus, access, {
    log: silentLogger(),
    stream: (id) => streams.get(id),
    maxEntriesPerMessage: PER_MESSAGE,
    socScale: 'percent',
  });
  gateway.start();
  const gw = await measure(
    () => bus.emit('bucketsClosed', { start, end: start + 900_000, buckets }),
    `ws://127.0.0.1:${g.port}/ws?streams=telemetry-realtime&telemetryInclude=default,energy`,
    rounds,
  );
  gateway.stop();
  await new Promise((r) => g.server.close(r));

  // the baseline: bare ws, the same messages already built
  const b = await listen();
  const wss = new WebSocketServer({ server: b.server });
  const entry = (i: number) =>
    JSON.stringify({
      deviceKind: 'battery_pack',
      kind: 'battery_pack',
      deviceId: `s${i}`,
      interval: '2026-11-23T10:00:00Z/2026-11-23T10:15:00Z',
      power_W: 1234.56 + i,
      soc: 55.5,
      energy_Wh_increment: 123456.78,
      energy_Wh_decrement: -98765.43,
    });
  const messages = Array.from(
    { length: MESSAGES },
    (_, m) =>
      `{"stream":"telemetry-realtime","entries":[${Array.from({ length: PER_MESSAGE }, (_, k) => entry(m * PER_MESSAGE + k)).join(',')}],"telemetryDevices":"partner","interval":"2026-11-23T10:00:00Z/2026-11-23T10:15:00Z","telemetryInclude":["default","energy"]}`,
  );
  const bare = await measure(
    () => {
      for (const ws of wss.clients) for (const m of messages) ws.send(m);
    },
    `ws://127.0.0.1:${b.port}/`,
    rounds,
  );
  wss.close();
  await new Promise((r) => b.server.close(r));

  const kb = (messages.reduce((s, m) => s + m.length, 0) / 1024).toFixed(0);
  console.log(
    `${CLIENTS} clients, a bucket of ${ENTRIES} entries in ${MESSAGES} messages (${kb} kB a client); median of ${rounds} rounds`,
  );
  console.log('');
  console.log('| case                        | last client done, ms | ratio | peak RSS MB (idle) | peak heap MB |');
  console.log('|-----------------------------|---------------------:|------:|-------------------:|-------------:|');
  for (const [name, r] of [
    ['bare ws, pre-built messages', bare],
    ['sitegw WsServer push', gw],
  ] as const) {
    console.log(
      `| ${name.padEnd(27)} | ${median(r.ms).toFixed(0).padStart(20)} | ${(median(r.ms) / median(bare.ms)).toFixed(2).padStart(4)}x | ${r.peakRssMB.toFixed(0).padStart(8)} (${r.baseRssMB.toFixed(0).padStart(4)})     | ${r.peakHeapMB.toFixed(0).padStart(12)} |`,
    );
  }
  process.exit(0);
}
