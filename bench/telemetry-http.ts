/**
 * HTTP throughput of the telemetry endpoint (GET /api/v1/devices/{id}/telemetry, one day of
 * PT15M buckets of the grid meter, include=default,energy, partner bearer token) against a bare
 * fastify route answering the same bytes, both served by one child process that runs
 * `sitegw demo`'s code (simulator, poller, token service, the daemon's logger at its default level, onto /dev/null). This process is the
 * load: keep-alive node:http clients, CONCURRENCY requests in flight, rounds alternating which
 * side goes first. Every gateway answer is checked against the bytes the bare route sends.
 *
 * Figures per side: requests/s (median over rounds) and the server child's CPU time per request
 * (process.cpuUsage across the round), which is what the gateway pays whatever the client costs.
 *
 *   node --expose-gc --import tsx bench/telemetry-http.ts [rounds] [requestsPerRound]
 *   BENCH_QUESTION=month: instead, 30 days of PT15M (2,880 entries, ~620 kB) in WINDOWS different
 *   intervals, each starting 45 minutes after the one before (so both edge days are part-days,
 *   read from SQLite every time), asked in turn; the bare route answers each window's bytes. The
 *   endpoint keeps no whole answer over a day (src/telemetry/answer-cache.ts), so every request
 *   is assembled: the kept days' parts joined, the edge days read (src/telemetry/answer-parts.ts).
 *   The server child runs with the node flags of systemd/sitegw.service (BENCH_NODE_ARGS overrides),
 *   on the Node that runs this script (e.g. `.ci/with-node.sh 24 node --expose-gc --import tsx bench/telemetry-http.ts`).
 *   BENCH_GATEWAY=dist: the gateway from `dist/` (run `npm run build` first), as the unit runs it;
 *   by default from source through tsx, which costs more per request (see above).
 *   BENCH_BOUND=read|text|deflated: the built gateway with a day's rows (read) or its whole
 *   answer (text, or deflated) kept per question after its first time, an upper bound on what a
 *   faster read or a stored day could give (bench/lib/bound-gateway.mjs; implies the built code;
 *   meant for BENCH_QUESTION=fresh-day).
 *   (BENCH_CPU_PROF=<dir>: the server child writes a V8 CPU profile of each round there, after
 *   the fill and the warm-up; `node bench/lib/profile-top.mjs <dir>/gateway-*.cpuprofile` sums
 *   the gateway's, `<dir>/bare-*` the bare route's; BENCH_HEAP_PROF=<dir>: instead, V8's sampling
 *   heap profile of each round, the garbage included, `node bench/lib/heap-top.mjs <dir>/gateway-*`
 *   sums what each function allocated)
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, deflateRawSync } from 'node:zlib';
import { Agent, request } from '../src/core/node-http.js';
import { unitRuntime } from '../test/support/unit-runtime.js';
// @ts-expect-error: a plain .mjs of bench/lib, no types
import { boundGateway, removeBound } from './lib/bound-gateway.mjs';
import { median } from './lib/stats.js';

const ROUNDS = Number(process.argv[2] ?? 9);
const MONTH = process.env.BENCH_QUESTION === 'month';
/**
 * BENCH_QUESTION=fresh-day: one UTC day of PT15M, a day not asked before, one request at a time
 * (issue 46 item 3): every stream of the demo site × 16 past days × two include sets, asked in
 * turn, more bytes than the answer cache or the kept parts hold, so every answer is
 * made afresh (the setup checks the working set is big enough). The history is filled with a
 * 60 s poll (a 10 s one would take minutes under --lite-mode; the buckets' shape is the same).
 */
const FRESH_DAY = process.env.BENCH_QUESTION === 'fresh-day';
const FRESH_DAYS = 16;
/**
 * BENCH_QUESTION=no-data: the fresh day's questions asked of devices the site does not have, one
 * at a time: each answer is `{"entries":[]}`, so what the endpoint costs beyond the bare route is
 * its own request path (the token, the hooks, the query's parsing), without the day's work.
 */
const NO_DATA = process.env.BENCH_QUESTION === 'no-data';
const ONE_AT_A_TIME = FRESH_DAY || NO_DATA;
const REQUESTS = Number(process.argv[3] ?? (MONTH ? 200 : ONE_AT_A_TIME ? 500 : 2000));
const CONCURRENCY = ONE_AT_A_TIME ? 1 : 8;
const WINDOWS = 32;

interface Ready {
  /** one per question asked in turn; the bare route's answer i is the gateway's answer i */
  gatewayUrls: string[];
  bareUrls: string[];
  token: string;
  bytes: number;
  entries: number;
}
type ToChild = { cpu: true } | { profile: 'start' | 'stop'; side: 'gateway' | 'bare' } | { stop: true };
type FromChild = { ready: Ready } | { cpuUs: number };

if (process.env.BENCH_ROLE === 'server') {
  const { default: Fastify } = await import('fastify');
  // BENCH_GATEWAY=dist: the gateway's code as built (`npm run build`), what the unit runs; from
  // source, tsx's transform adds a __name call to every function expression it creates
  const app = process.env.BENCH_GATEWAY_DIR
    ? `../${process.env.BENCH_GATEWAY_DIR}`
    : process.env.BENCH_GATEWAY === 'dist'
      ? '../dist'
      : '../src';
  const { startDemo } = (await import(`${app}/demo/demo.js`)) as typeof import('../src/demo/demo.js');
  // node:http, not fetch: undici's parser is WebAssembly, which the unit's --lite-mode leaves out
  const { basic, FORM, rawRequest } = await import('../test/support/auth.js');
  const { createLogger } = (await import(`${app}/core/log.js`)) as typeof import('../src/core/log.js');
  const demo = await startDemo({
    port: 0,
    modbusPorts: 'auto',
    speed: 1,
    history: MONTH ? 'P32D' : FRESH_DAY ? `P${FRESH_DAYS + 1}D` : 'P2D',
    ...(FRESH_DAY ? { pollSeconds: 60 } : {}),
    quiet: true,
    // the daemon's own logger at its default level (SITEGW_LOG_LEVEL, info), onto the child's
    // stdout, which goes to /dev/null: what a request costs in the log is counted
    log: createLogger(),
    dataDir: process.env.BENCH_DIR!,
  });
  const c = demo.credentials;
  const granted = await rawRequest({
    method: 'POST',
    url: c.tokenUrl,
    headers: { ...FORM, authorization: basic(c.client.id, c.client.secret) },
    body: 'grant_type=client_credentials',
  });
  if (granted.status !== 200) throw new Error(`token request failed: ${granted.status} ${granted.text}`);
  const token = granted.body.access_token as string;
  const stream =
    demo.daemon.site.streams().find((s) => s.id.endsWith('__GRID_METER_DERIVED')) ?? demo.daemon.site.streams()[0]!;
  const base = `/api/v1/devices/${encodeURIComponent(stream.id)}/telemetry`;
  const paths: string[] = [];
  if (MONTH) {
    // 30-day windows that ended over an hour ago, 45 minutes apart
    const last = Math.floor((demo.clock.now() - 3_600_000) / 900_000) * 900_000;
    for (let i = 0; i < WINDOWS; i++) {
      const end = last - (WINDOWS - 1 - i) * 45 * 60_000;
      const from = new Date(end - 30 * 86_400_000).toISOString().replace('.000', '');
      paths.push(`${base}?interval=${from}/${new Date(end).toISOString().replace('.000', '')}&include=default,energy`);
    }
  } else if (ONE_AT_A_TIME) {
    const today = Math.floor(demo.clock.now() / 86_400_000) * 86_400_000;
    for (let d = 1; d <= FRESH_DAYS; d++)
      for (const include of ['default,energy', 'default'])
        for (const st of demo.daemon.site.streams()) {
          const from = new Date(today - d * 86_400_000).toISOString().replace('.000', '');
          const id = NO_DATA ? `no-such-${st.id}` : st.id;
          paths.push(`/api/v1/devices/${encodeURIComponent(id)}/telemetry?interval=${from}/P1D&include=${include}`);
        }
  } else {
    // a day that ended over an hour ago: every bucket in it is closed, so the answer is the same all run
    const from = `${new Date(demo.clock.now() - 25 * 3_600_000).toISOString().slice(0, 14)}00:00Z`;
    paths.push(`${base}?interval=${from}/P1D&include=default,energy`);
  }
  const answers: Buffer[] = [];
  for (const path of paths) {
    const res = await rawRequest({ url: `${demo.url}${path}`, headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`telemetry answered ${res.status}`);
    answers.push(Buffer.from(res.text));
  }
  if (FRESH_DAY) {
    // the answer cache (2 MiB) and the kept parts (4 MiB) are each least recently used out: asked
    // in turn, a working set over the larger of them is answered afresh every time
    const total = answers.reduce((n, a) => n + a.length, 0);
    if (total < 5 * 2 ** 20) throw new Error(`fresh-day: ${total} bytes in all, too few to miss every cache`);
  }
  const bare = Fastify();
  bare.get<{ Params: { i: string } }>('/bare/:i', async (req, reply) =>
    reply.type('application/json; charset=utf-8').send(answers[Number(req.params.i)]),
  );
  const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });
  // BENCH_CPU_PROF: the rounds are profiled after the fill and the warm-up, through the inspector,
  // one profile a round and side (gateway-round-N, bare-round-N), so what the endpoint pays beyond
  // the bare route (the kernel's writev is both's) is read side by side
  const { Session } = await import('node:inspector/promises');
  const { writeFileSync } = await import('node:fs');
  const session = new Session();
  const HEAP = process.env.BENCH_HEAP_PROF;
  let connected = false;
  const profiles = { gateway: 0, bare: 0 };
  const profile = async (what: 'start' | 'stop', side: 'gateway' | 'bare') => {
    if (what === 'start') {
      if (!connected) {
        session.connect();
        await session.post(HEAP ? 'HeapProfiler.enable' : 'Profiler.enable');
        connected = true;
      }
      if (HEAP) {
        await session.post('HeapProfiler.startSampling', {
          samplingInterval: 1024,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: true,
        });
      } else await session.post('Profiler.start');
    } else if (HEAP) {
      const { profile } = await session.post('HeapProfiler.stopSampling');
      writeFileSync(join(HEAP, `${side}-round-${++profiles[side]}.heapprofile`), JSON.stringify(profile));
    } else {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(
        join(process.env.BENCH_CPU_PROF!, `${side}-round-${++profiles[side]}.cpuprofile`),
        JSON.stringify(profile),
      );
    }
  };
  process.on('message', (m: ToChild) => {
    if ('cpu' in m) {
      const u = process.cpuUsage();
      process.send!({ cpuUs: u.user + u.system } satisfies FromChild);
    } else if ('profile' in m) {
      void profile(m.profile, m.side).then(() => process.send!({ cpuUs: 0 } satisfies FromChild));
    } else {
      void Promise.all([bare.close(), demo.stop()]).then(() => process.exit(0));
    }
  });
  const entries = (JSON.parse(answers[0]!.toString()) as { entries: unknown[] }).entries.length;
  process.send!({
    ready: {
      gatewayUrls: paths.map((p) => `${demo.url}${p}`),
      bareUrls: paths.map((_, i) => `${bareUrl}/bare/${i}`),
      token,
      bytes: answers[0]!.length,
      entries,
    },
  } satisfies FromChild);
} else {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-http-'));
  const runtime = unitRuntime();
  const prof = process.env.BENCH_CPU_PROF ?? process.env.BENCH_HEAP_PROF;
  const bound = process.env.BENCH_BOUND;
  const gatewayDir = bound ? { BENCH_GATEWAY_DIR: boundGateway(bound) } : {};
  const child = fork(fileURLToPath(import.meta.url), [], {
    env: { ...process.env, ...gatewayDir, BENCH_ROLE: 'server', BENCH_DIR: dir },
    execArgv: [...runtime.args, '--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const next = () => new Promise<FromChild>((resolve) => child.once('message', (m: FromChild) => resolve(m)));
  const serverCpuUs = async () => {
    child.send({ cpu: true } satisfies ToChild);
    const m = await next();
    if (!('cpuUs' in m)) throw new Error('expected cpuUs');
    return m.cpuUs;
  };
  try {
    const first = await next();
    if (!('ready' in first)) throw new Error('expected ready');
    const ready = first.ready;
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const expected: Buffer[] = [];
    /** where each list of URLs goes on from in the next round (fresh-day: never one asked lately) */
    const cursor = new Map<string[], number>();

    const get = (url: string, headers: Record<string, string>) =>
      new Promise<Buffer>((resolve, reject) => {
        request(url, { agent, headers }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (d: Buffer) => parts.push(d));
          res.on('end', () =>
            res.statusCode === 200
              ? resolve(Buffer.concat(parts))
              : reject(new Error(`${url} answered ${res.statusCode}`)),
          );
        })
          .on('error', reject)
          .end();
      });
    const load = async (
      urls: string[],
      headers: Record<string, string>,
      n: number,
    ): Promise<{ rps: number; cpuUsPerReq: number }> => {
      let left = n;
      let next = cursor.get(urls) ?? 0;
      const cpu0 = await serverCpuUs();
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (left-- > 0) {
            const i = next++ % urls.length;
            const body = await get(urls[i]!, headers);
            if (!body.equals(expected[i]!))
              throw new Error(
                `${urls[i]} answered other bytes than the bare route (${body.length} vs ${expected[i]!.length})`,
              );
          }
        }),
      );
      const s = (performance.now() - t0) / 1000;
      cursor.set(urls, next);
      const cpuUs = (await serverCpuUs()) - cpu0;
      return { rps: n / s, cpuUsPerReq: cpuUs / n };
    };
    const auth = { authorization: `Bearer ${ready.token}` };
    for (const u of ready.bareUrls) expected.push(await get(u, {}));
    // warm-up: JIT and the statement caches of both sides
    const warm = MONTH ? 2 * WINDOWS : ONE_AT_A_TIME ? 100 : 500;
    await load(ready.bareUrls, {}, warm);
    await load(ready.gatewayUrls, auth, warm);

    const profiled = async <T>(side: 'gateway' | 'bare', f: () => Promise<T>): Promise<T> => {
      if (!prof) return f();
      child.send({ profile: 'start', side } satisfies ToChild);
      await next();
      const r = await f();
      child.send({ profile: 'stop', side } satisfies ToChild);
      await next();
      return r;
    };
    const bareRound = () => profiled('bare', () => load(ready.bareUrls, {}, REQUESTS));
    const gatewayRound = () => profiled('gateway', () => load(ready.gatewayUrls, auth, REQUESTS));
    const bare: { rps: number; cpuUsPerReq: number }[] = [];
    const gw: { rps: number; cpuUsPerReq: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      // alternate who goes first, so drift (the poller, JIT, GC debt) falls on both alike
      if (r % 2 === 0) {
        bare.push(await bareRound());
        gw.push(await gatewayRound());
      } else {
        gw.push(await gatewayRound());
        bare.push(await bareRound());
      }
    }
    agent.destroy();
    const rps = (xs: typeof bare) => median(xs.map((x) => x.rps));
    const cpu = (xs: typeof bare) => median(xs.map((x) => x.cpuUsPerReq));
    const ratios = bare.map((b, i) => b.rps / gw[i]!.rps);
    const cpuRatios = bare.map((b, i) => gw[i]!.cpuUsPerReq / b.cpuUsPerReq);
    const range = (xs: number[]) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}×`;

    console.log(
      `${ready.bytes} B per answer (${ready.entries} PT15M entries${MONTH ? `, ${WINDOWS} different 30-day windows in turn` : ''}${FRESH_DAY ? `, ${ready.gatewayUrls.length} different stream-days in turn, none asked lately` : ''}); ${ROUNDS} interleaved rounds of ${REQUESTS} requests, ${CONCURRENCY} in flight over keep-alive; ` +
        `server: sitegw demo (simulator + gateway, daemon logger at info into /dev/null) in one child; medians over rounds, ratio range per round`,
    );
    console.log('');
    console.log(
      '| telemetry endpoint vs bare fastify       | req/s  | server CPU µs/req | slower than bare (req/s) | CPU ratio |',
    );
    console.log(
      '|------------------------------------------|-------:|------------------:|-------------------------:|----------:|',
    );
    console.log(
      `| baseline: bare fastify, same bytes       | ${rps(bare).toFixed(0).padStart(6)} | ${cpu(bare).toFixed(0).padStart(17)} | 1.00× | 1.00× |`,
    );
    console.log(
      `| GET telemetry, ${MONTH ? '30 days' : FRESH_DAY ? 'a fresh P1D' : NO_DATA ? 'P1D (no such device)' : 'P1D'} of PT15M, bearer ${MONTH ? '  ' : ''}   | ${rps(gw).toFixed(0).padStart(6)} | ${cpu(gw).toFixed(0).padStart(17)} | ${median(ratios).toFixed(2)}× (${range(ratios)}) | ${median(cpuRatios).toFixed(2)}× |`,
    );
    // the row of bench/README.md#footprint: the issue's target is the endpoint at >= half of bare
    const share = median(ratios.map((r) => 1 / r));
    const flags = runtime.args.join(' ') || '(none)';
    console.log('');
    console.log('bench/README.md#footprint row (Node | flags | bare req/s | endpoint req/s | share (>= 0.50) | CPU):');
    console.log(
      `| ${process.versions.node} | \`${flags}\` | ${rps(bare).toFixed(0)} | ${rps(gw).toFixed(0)} | ` +
        `${share.toFixed(2)} (${(1 / Math.max(...ratios)).toFixed(2)}–${(1 / Math.min(...ratios)).toFixed(2)}): ` +
        `${share >= 0.5 ? 'met' : 'NOT met'} | ` +
        `${cpu(gw).toFixed(0)} vs ${cpu(bare).toFixed(0)} µs |`,
    );
    // what a day kept ready to send would take stored compressed: the price of that lever in bytes
    if (FRESH_DAY) {
      const avg = (f: (b: Buffer) => number) => expected.reduce((n, b) => n + f(b), 0) / expected.length / 1000;
      console.log(
        `a fresh day's answer, average of ${expected.length}: ${avg((b) => b.length).toFixed(1)} kB, ` +
          `${avg((b) => deflateRawSync(b, { level: 9 }).length).toFixed(2)} kB deflated (level 9), ` +
          `${avg((b) => brotliCompressSync(b).length).toFixed(2)} kB brotli`,
      );
    }
  } finally {
    child.send({ stop: true } satisfies ToChild);
    await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
    if (gatewayDir.BENCH_GATEWAY_DIR) removeBound(gatewayDir.BENCH_GATEWAY_DIR);
  }
}
