/**
 * Footprint of a ten-device site polled every second (an inverter, seven battery blocks, a grid
 * and a house meter, all on the simulator's real Modbus TCP servers, real time): the gateway
 * process's resident memory and CPU share over a real-time window, then HTTP throughput of the
 * telemetry endpoint (one day of PT15M buckets, bearer token) with, in the same process and run,
 * a bare fastify route answering the same bytes as the baseline.
 *
 * The measured process is a child (`BENCH_ROLE=gateway`) that runs `sitegw demo`'s code: it holds
 * the simulator too, so its memory and CPU are an upper bound for the gateway alone.
 *
 * Then the gateway ALONE: the built `node dist/cli.js run --config` (no tsx, no simulator in it)
 * as a child, polling the same ten devices served from this process, its RSS read from
 * /proc/<pid>/status over the window, beside a bare `node` idling in the same run.
 *
 *   npm run build && node --expose-gc --import tsx bench/footprint.ts [windowSeconds] [requests]
 *   (BENCH_ONLY=alone: the gateway-alone part only)
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WINDOW_S = Number(process.argv[2] ?? 30);
const REQUESTS = Number(process.argv[3] ?? 3000);
const CONCURRENCY = 8;
const BLOCKS = 7;

interface Ready {
  url: string;
  bareUrl: string;
  telemetryPath: string;
  token: string;
}
interface Footprint {
  rssMB: number;
  heapMB: number;
  cpuPercent: number;
  polls: number;
}

if (process.env.BENCH_ROLE === 'gateway') {
  const { default: Fastify } = await import('fastify');
  const { startDemo } = await import('../src/demo/demo.js');
  const { defaultSimConfig } = await import('../src/sim/config.js');
  const { partnerToken } = await import('../test/support/auth.js');
  const sim = defaultSimConfig();
  sim.battery.blocks = Array.from({ length: BLOCKS }, () => ({ ...sim.battery.blocks[0]! }));
  const demo = await startDemo({ port: 0, modbusPorts: 'auto', speed: 1, pollSeconds: 1, history: 'P1D', quiet: true, dataDir: process.env.BENCH_DIR!, sim });
  const token = await partnerToken(demo.credentials);
  const stream = demo.daemon.site.streams().find((s) => s.id.endsWith('__GRID_METER_DERIVED')) ?? demo.daemon.site.streams()[0]!;
  const from = new Date(demo.clock.now() - 86_400_000).toISOString().slice(0, 14) + '00:00Z';
  const telemetryPath = `/api/v1/devices/${encodeURIComponent(stream.id)}/telemetry?interval=${from}/P1D&include=default,energy`;
  const bytes = Buffer.from(await (await fetch(`${demo.url}${telemetryPath}`, { headers: { authorization: `Bearer ${token}` } })).arrayBuffer());
  const bare = Fastify();
  bare.get('/bare', async (_req, reply) => reply.type('application/json; charset=utf-8').send(bytes));
  const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });
  process.on('message', (m: { measure?: number }) => {
    if (m.measure === undefined) return;
    // a quiet start: the pre-fill and first polls are done; measure the steady state
    global.gc?.();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    setTimeout(() => {
      const cpu = process.cpuUsage(cpu0);
      const wallUs = (performance.now() - t0) * 1000;
      const polls = demo.servers.faults.requests('inverter', 1);
      const f: Footprint = { rssMB: process.memoryUsage().rss / 1e6, heapMB: process.memoryUsage().heapUsed / 1e6, cpuPercent: ((cpu.user + cpu.system) / wallUs) * 100, polls };
      process.send!({ footprint: f });
    }, m.measure * 1000);
  });
  process.send!({ ready: { url: demo.url, bareUrl: `${bareUrl}/bare`, telemetryPath, token } satisfies Ready });
} else if (process.env.BENCH_ONLY === 'alone') {
  await gatewayAlone();
} else {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-'));
  const child = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, BENCH_ROLE: 'gateway', BENCH_DIR: dir, SITEGW_LOG_LEVEL: 'silent' }, execArgv: ['--expose-gc', '--import', 'tsx'] });
  const next = <T>(key: string) => new Promise<T>((resolve) => child.on('message', (m: Record<string, T>) => m[key] !== undefined && resolve(m[key]!)));
  try {
    const ready = await next<Ready>('ready');
    await new Promise((r) => setTimeout(r, 3000));
    child.send({ measure: WINDOW_S });
    const fp = await next<Footprint>('footprint');

    const load = async (url: string, headers: Record<string, string>): Promise<number> => {
      let left = REQUESTS;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (left-- > 0) {
            const res = await fetch(url, { headers });
            if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
            await res.arrayBuffer();
          }
        }),
      );
      return REQUESTS / ((performance.now() - t0) / 1000);
    };
    const auth = { authorization: `Bearer ${ready.token}` };
    // interleaved rounds, so drift (JIT, the poller's own work) falls on both alike
    const gw: number[] = [];
    const bare: number[] = [];
    for (let round = 0; round < 3; round++) {
      bare.push(await load(ready.bareUrl, {}));
      gw.push(await load(`${ready.url}${ready.telemetryPath}`, auth));
    }
    const best = (xs: number[]) => Math.max(...xs);
    const ratio = best(bare) / best(gw);
    console.log(`ten devices (inverter, ${BLOCKS} battery blocks, grid and house meter) polled every 1 s on real time; ${WINDOW_S} s window after the start; ${REQUESTS} requests × 3 rounds, ${CONCURRENCY} at a time; the inverter unit answered ${fp.polls} Modbus requests by the end of the window`);
    console.log('');
    console.log('| case                                   | figure        | target / ratio    |');
    console.log('|----------------------------------------|--------------:|------------------:|');
    console.log(`| resident memory (gateway + simulator)  | ${fp.rssMB.toFixed(0).padStart(9)} MB | < 80 MB           |`);
    console.log(`| heap used after GC                     | ${fp.heapMB.toFixed(0).padStart(9)} MB |                   |`);
    console.log(`| CPU share of one core                  | ${fp.cpuPercent.toFixed(2).padStart(10)} %  | < 5 %             |`);
    console.log(`| baseline: bare fastify, same bytes     | ${best(bare).toFixed(0).padStart(8)} req/s | 1.00x             |`);
    console.log(`| telemetry endpoint (P1D of PT15M)      | ${best(gw).toFixed(0).padStart(8)} req/s | ${ratio.toFixed(2).padStart(4)}x slower      |`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
  await gatewayAlone();
}

/** VmRSS of a process, MB (1e6 bytes, as above) */
function rssOf(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return (Number(kb) * 1024) / 1e6;
}

async function gatewayAlone(): Promise<void> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  if (!existsSync(join(root, 'dist/cli.js'))) {
    console.log('\ngateway alone: SKIPPED, dist/cli.js is missing (npm run build first)');
    return;
  }
  const { ScaledClock } = await import('../src/core/clock.js');
  const { defaultSimConfig } = await import('../src/sim/config.js');
  const { SimSite } = await import('../src/sim/site.js');
  const { startSimServers } = await import('../src/sim/servers.js');
  const { demoSiteYaml } = await import('../src/demo/default-site.js');
  const { freePort } = await import('../test/support/mqtt-brokers.js');
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-alone-'));
  const clock = new ScaledClock(1);
  const simConfig = defaultSimConfig();
  simConfig.battery.blocks = Array.from({ length: BLOCKS }, () => ({ ...simConfig.battery.blocks[0]! }));
  const servers = await startSimServers(new SimSite(simConfig, clock.now()), clock);
  const port = await freePort();
  writeFileSync(join(dir, 'site.yaml'), demoSiteYaml(servers, { httpHost: '127.0.0.1', httpPort: port, dataDir: dir, pollSeconds: 1, batteryBlocks: BLOCKS }));
  const procs: ChildProcess[] = [];
  try {
    const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const gw = spawn(process.execPath, [join(root, 'dist/cli.js'), 'run', '--config', join(dir, 'site.yaml')], { cwd: dir, stdio: 'ignore', env: { ...process.env, SITEGW_LOG_LEVEL: 'silent' } });
    procs.push(bare, gw);
    const until = Date.now() + 30_000;
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status < 500, () => false);
      if (ok) break;
      if (Date.now() > until || gw.exitCode !== null) throw new Error('the gateway did not come up');
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 3000));
    const samples: number[] = [];
    for (let t = 0; t < WINDOW_S; t++) {
      await new Promise((r) => setTimeout(r, 1000));
      samples.push(rssOf(gw.pid!));
    }
    const polls = servers.faults.requests('inverter', 1);
    console.log('');
    console.log(`gateway alone: node ${join('dist', 'cli.js')} run --config (no tsx), the same ten devices at 1 s served from the bench process; RSS sampled every second over ${WINDOW_S} s (the inverter unit answered ${polls} requests)`);
    console.log('');
    console.log('| case                                   | figure        | target / ratio    |');
    console.log('|----------------------------------------|--------------:|------------------:|');
    console.log(`| baseline: bare node, idle              | ${rssOf(bare.pid!).toFixed(0).padStart(9)} MB |                   |`);
    console.log(`| resident memory, gateway alone (max)   | ${Math.max(...samples).toFixed(0).padStart(9)} MB | < 80 MB           |`);
    console.log(`| resident memory, gateway alone (last)  | ${samples.at(-1)!.toFixed(0).padStart(9)} MB |                   |`);
  } finally {
    for (const p of procs) {
      if (p.exitCode === null) {
        p.kill('SIGTERM');
        await new Promise((r) => p.once('exit', r));
      }
    }
    await servers.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
