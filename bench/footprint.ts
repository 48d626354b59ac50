/**
 * Footprint of the gateway as deployed: the built `node dist/cli.js run --config site.yaml` in its
 * own process, started with the node flags and environment of systemd/sitegw.service (read from
 * the unit, so this measures what a Pi runs), polling a ten-device site (an inverter, seven
 * battery blocks, a grid and a house meter) every second on real time. The simulator's Modbus
 * TCP servers and the load generator live in this process, so nothing of theirs is counted.
 *
 * Reported: resident memory (VmRSS every 0.5 s: the start-up peak, then the steady window: its
 * median, max and least-squares trend, which shows a leak only over a long window), what
 * of it is the process's own (private) and its proportional share (PSS: the node binary's pages
 * are shared with the kernel's file cache and other node processes), CPU share of one core over
 * the window (utime + stime from /proc/<pid>/stat), and HTTP throughput of the telemetry endpoint
 * (one day of PT15M buckets, bearer token) against a bare fastify process, same flags, answering
 * the same bytes, in interleaved rounds. Two memory baselines with the same flags: a bare idle
 * `node`, and the bare stack (every dependency the daemon loads on this site imported, a
 * fastify server listening, an SQLite database open, one time-zone conversion) idling: what any
 * gateway on this stack costs before its own code and data.
 *
 *   npm run build && node --import tsx bench/footprint.ts [windowSeconds] [requests]
 *   BENCH_NODE_ARGS="..." overrides the unit's node flags (e.g. "" for node's defaults)
 *   BENCH_NODE=/path/to/bin/node measures under that Node (e.g. the one .ci/with-node.sh 24 unpacks);
 *   this process, the simulator and the load generator stay on the Node that runs the bench
 *   BENCH_SETTLE_S=60 waits longer before the window (a loaded machine starts slower)
 *   BENCH_SAMPLES=/tmp/x.samples writes a line a minute (the hour-long run: window 3600)
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOKEN_PATH } from '../src/api/http/oauth.js';
import { demoSiteYaml } from '../src/demo/default-site.js';
import { startDemo } from '../src/demo/demo.js';
import { defaultSimConfig } from '../src/sim/config.js';
import { partnerToken } from '../test/support/auth.js';
import { freePort } from '../test/support/mqtt-brokers.js';
import { unitRuntime } from '../test/support/unit-runtime.js';
import { proc } from './lib/proc.js';
import { median, slopePerHour } from './lib/stats.js';

const WINDOW_S = Number(process.argv[2] ?? 30);
const REQUESTS = Number(process.argv[3] ?? 3000);
/** BENCH_SETTLE_S: seconds from the API answering to the window (the start-up peak decays in them) */
const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 15);
/** the Node whose footprint is measured: the gateway and both baselines run on it */
const NODE = process.env.BENCH_NODE ?? process.execPath;
const nodeVersion = execFileSync(NODE, ['--version'], { encoding: 'utf8' }).trim();
const CONCURRENCY = 8;
/** BENCH_SAMPLES=<file>: one line a minute of the window (for the hour-long flatness run) */
const SAMPLES = process.env.BENCH_SAMPLES;
const BLOCKS = 7;
const root = fileURLToPath(new URL('..', import.meta.url));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, child: ChildProcess, ok: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await ok().catch(() => false))) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${what} did not come up`);
    await sleep(100);
  }
}

async function load(url: string, headers: Record<string, string>): Promise<number> {
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
}

if (!existsSync(join(root, 'dist/cli.js'))) {
  console.log('footprint: SKIPPED, dist/cli.js is missing (npm run build first)');
  process.exit(0);
}

const runtime = unitRuntime();
const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-footprint-'));
const sim = defaultSimConfig();
sim.battery.blocks = Array.from({ length: BLOCKS }, () => ({ ...sim.battery.blocks[0]! }));
// the demo pre-fills a day of buckets through the real poller and registers its partner client;
// its daemon then stops and the deployed process takes over the same database and devices
const demo = await startDemo({
  port: 0,
  modbusPorts: 'auto',
  speed: 1,
  pollSeconds: 1,
  history: 'P1D',
  quiet: true,
  dataDir: dir,
  sim,
});
await demo.daemon.stop();
await demo.simControl.close();
const stream =
  demo.daemon.site.streams().find((s) => s.id.endsWith('__GRID_METER_DERIVED')) ?? demo.daemon.site.streams()[0]!;
const port = await freePort();
writeFileSync(
  join(dir, 'site.yaml'),
  demoSiteYaml(demo.servers, {
    httpHost: '127.0.0.1',
    httpPort: port,
    dataDir: dir,
    pollSeconds: 1,
    batteryBlocks: BLOCKS,
  }),
);

/**
 * The dependencies the built code imports at run time (a type-only import, such as
 * @fastify/type-provider-typebox's, is erased by tsc and loads nothing), less mqtt: it is imported
 * only when `uplink:` is configured (src/main.ts), and this site has none; and less pg, which only
 * the cloud consumer imports.
 */
function runtimeDeps(): string[] {
  const declared = Object.keys(
    (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> })
      .dependencies,
  );
  const imported = new Set<string>();
  for (const f of readdirSync(join(root, 'dist'), { recursive: true, encoding: 'utf8' })) {
    if (!f.endsWith('.js')) continue;
    for (const m of readFileSync(join(root, 'dist', f), 'utf8').matchAll(/(?:from |import\()'([^'.][^']*)'/g))
      imported.add(m[1]!);
  }
  // pg: imported only by `sitegw consume`, the cloud side's consumer, never on the box
  return declared.filter((d) => imported.has(d) && d !== 'mqtt' && d !== 'pg');
}
const stackDeps = runtimeDeps();
const bareStack = `
for (const d of ${JSON.stringify(stackDeps)}) await import(d);
const { sqliteDriver } = await import(${JSON.stringify(join(root, 'dist/store/driver.js'))});
const Database = sqliteDriver();
new Database(':memory:').prepare('SELECT 1').get();
const { DateTime } = await import('luxon');
DateTime.now().setZone('Europe/Berlin').toISO();
const { default: Fastify } = await import('fastify');
await Fastify().listen({ host: '127.0.0.1', port: 0 });`;

const procs: ChildProcess[] = [];
const start = (args: string[], cwd: string) => {
  const p = spawn(NODE, [...runtime.args, ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...runtime.env, SITEGW_LOG_LEVEL: 'silent' },
  });
  procs.push(p);
  return p;
};
try {
  const idle = start(['-e', 'setInterval(() => {}, 1000)'], root);
  const stack = start(['--input-type=module', '-e', bareStack], root);
  const spawnedAt = performance.now();
  const gwChild = start([join(root, 'dist/cli.js'), 'run', '--config', join(dir, 'site.yaml')], dir);
  const gw = proc(gwChild.pid!);
  const startRss: number[] = [];
  const sampler = setInterval(() => startRss.push(gw.rssMB()), 500);
  const url = `http://127.0.0.1:${port}`;
  await until('the gateway', gwChild, async () => (await fetch(`${url}/healthz`)).status < 500);
  const startupS = (performance.now() - spawnedAt) / 1000;
  const grant = async () => {
    const token = await partnerToken({ ...demo.credentials, tokenUrl: `${url}${TOKEN_PATH}` });
    return { authorization: `Bearer ${token}` };
  };
  const from = new Date(demo.clock.now() - 86_400_000).toISOString().slice(0, 14) + '00:00Z';
  const telemetry = `${url}/api/v1/devices/${encodeURIComponent(stream.id)}/telemetry?interval=${from}/P1D&include=default,energy`;
  // a partner's first token and answer belong to the start-up (its peak counts the scrypt)
  let auth = await grant();
  await fetch(telemetry, { headers: auth });

  await sleep(SETTLE_S * 1000);
  clearInterval(sampler);
  const window: number[] = [];
  /** private MB every 10 s of the window: the figure the target is set on */
  const privateWindow: number[] = [];
  const cpu0 = gw.cpuSeconds();
  const polls0 = demo.servers.faults.requests('inverter', 1);
  const t0 = performance.now();
  const header = `# ${nodeVersion} ${runtime.args.join(' ')}\nseconds rssMB privateMB pssMB cpuPercent\n`;
  if (SAMPLES) writeFileSync(SAMPLES, header);
  for (let i = 1; i <= WINDOW_S * 2; i++) {
    await sleep(500);
    window.push(gw.rssMB());
    if (i % 20 === 0) privateWindow.push(gw.shares().privateMB);
    if (SAMPLES && i % 120 === 0) {
      const s = (performance.now() - t0) / 1000;
      const { privateMB, pssMB } = gw.shares();
      const cpu = ((gw.cpuSeconds() - cpu0) / s) * 100;
      const rss = window.at(-1) ?? NaN;
      const line = [s.toFixed(0), rss.toFixed(1), privateMB.toFixed(1), pssMB.toFixed(1), cpu.toFixed(2)];
      appendFileSync(SAMPLES, `${line.join(' ')}\n`);
    }
  }
  const cpuPercent = ((gw.cpuSeconds() - cpu0) / ((performance.now() - t0) / 1000)) * 100;
  const polls = demo.servers.faults.requests('inverter', 1) - polls0;
  const shares = gw.shares();

  // an hour's window outlives the first access token (and closes the day's last bucket), so the
  // HTTP rounds take a fresh token and the answer as it is now
  auth = await grant();
  const bytesFile = join(dir, 'telemetry.json');
  writeFileSync(bytesFile, Buffer.from(await (await fetch(telemetry, { headers: auth })).arrayBuffer()));
  const bareChild = start(
    [
      '-e',
      `const app = require('fastify')(); const body = require('fs').readFileSync(${JSON.stringify(bytesFile)}); app.get('/bare', (req, reply) => reply.type('application/json; charset=utf-8').send(body)); app.listen({ host: '127.0.0.1', port: 0 }).then((a) => console.log(a));`,
    ],
    root,
  );
  const bareUrl = await new Promise<string>((resolve) =>
    bareChild.stdout!.once('data', (d: Buffer) => resolve(`${d.toString().trim()}/bare`)),
  );
  // interleaved rounds, so drift (JIT warm-up, the poller's own work) falls on both alike
  const gwRate: number[] = [];
  const bareRate: number[] = [];
  for (let round = 0; round < 3; round++) {
    bareRate.push(await load(bareUrl, {}));
    gwRate.push(await load(telemetry, auth));
  }
  const afterLoad = gw.rssMB();
  const privateAfterLoad = gw.shares().privateMB;
  const best = (xs: number[]) => Math.max(...xs);
  const mb = (x: number) => `${x.toFixed(0).padStart(9)} MB`;

  console.log(
    `node ${nodeVersion} ${runtime.args.join(' ') || '(no flags)'} dist/cli.js run, environment ${Object.entries(
      runtime.env,
    )
      .map(([k, v]) => `${k}=${v}`)
      .join(
        ' ',
      )}; ten devices (inverter, ${BLOCKS} battery blocks, grid and house meter) polled every 1 s on real time; a day of history; window of ${WINDOW_S} s from ${SETTLE_S} s after the API answered (the inverter unit answered ${polls} requests in it); then ${REQUESTS} requests × 3 rounds, ${CONCURRENCY} at a time`,
  );
  console.log('');
  console.log('| case                                   | figure        | target / ratio    |');
  console.log('|----------------------------------------|--------------:|------------------:|');
  console.log(`| baseline: bare node, idle, same flags  | ${mb(proc(idle.pid!).rssMB())} |                   |`);
  console.log(`| baseline: bare stack, idle, same flags | ${mb(proc(stack.pid!).rssMB())} |                   |`);
  console.log(
    `| start-up, spawn to the API answering   | ${startupS.toFixed(1).padStart(10)} s  |                   |`,
  );
  console.log(`| resident memory, start-up peak         | ${mb(Math.max(...startRss))} |                   |`);
  console.log(`| resident memory, steady (median)       | ${mb(median(window))} | < 80 MB           |`);
  console.log(`| resident memory, steady (max)          | ${mb(Math.max(...window))} | < 80 MB           |`);
  console.log(
    `| resident memory, trend over the window | ${slopePerHour(window, 0.5).toFixed(1).padStart(7)} MB/h |                   |`,
  );
  console.log(`| private memory, steady (median)        | ${mb(median(privateWindow))} | < 48 MB           |`);
  console.log(`| private memory, steady (max)           | ${mb(Math.max(...privateWindow))} | < 48 MB           |`);
  const privateTrend = slopePerHour(privateWindow, 10);
  const trendCell = privateTrend.toFixed(1).padStart(7);
  console.log(`| private memory, trend over the window  | ${trendCell} MB/h | flat              |`);
  console.log(`| private memory, at the window's end    | ${mb(shares.privateMB)} |                   |`);
  console.log(`| proportional share (PSS)               | ${mb(shares.pssMB)} |                   |`);
  console.log(`| resident memory after the HTTP rounds  | ${mb(afterLoad)} |                   |`);
  console.log(`| private memory after the HTTP rounds   | ${mb(privateAfterLoad)} |                   |`);
  console.log(
    `| CPU share of one core                  | ${cpuPercent.toFixed(2).padStart(10)} %  | < 5 %             |`,
  );
  console.log(
    `| baseline: bare fastify, same bytes     | ${best(bareRate).toFixed(0).padStart(8)} req/s | 1.00x             |`,
  );
  console.log(
    `| telemetry endpoint (P1D of PT15M)      | ${best(gwRate).toFixed(0).padStart(8)} req/s | ${(best(bareRate) / best(gwRate)).toFixed(2).padStart(4)}x slower      |`,
  );
  const privateMax = Math.max(...privateWindow);
  const flags = runtime.args.join(' ') || '(none)';
  console.log('');
  console.log(
    'bench/README.md#footprint row (Node | flags | window | RSS | ' +
      'private: median (first → last, max), target < 48 MB | trend | PSS | CPU | private after the HTTP rounds):',
  );
  console.log(
    `| ${nodeVersion.slice(1)} | \`${flags}\` | ${WINDOW_S} s | ${median(window).toFixed(0)} MB | ` +
      `${median(privateWindow).toFixed(1)} ` +
      `(${(privateWindow[0] ?? NaN).toFixed(1)} → ${(privateWindow.at(-1) ?? NaN).toFixed(1)}, ` +
      `max ${privateMax.toFixed(1)}) MB: ` +
      `${privateMax < 48 ? 'met' : 'NOT met'} | ` +
      `${privateTrend.toFixed(1)} MB/h | ${shares.pssMB.toFixed(0)} MB | ${cpuPercent.toFixed(1)} % | ` +
      `${privateAfterLoad.toFixed(1)} MB |`,
  );
} finally {
  for (const p of procs) {
    if (p.exitCode === null) {
      p.kill('SIGTERM');
      await new Promise((r) => p.once('exit', r));
    }
  }
  await demo.servers.close();
  rmSync(dir, { recursive: true, force: true });
}
