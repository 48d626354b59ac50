/**
 * How the gateway grows with the site (issue 32): the built daemon (bench/lib/scale-gateway.ts,
 * the unit's node flags) polling sites of 10, 50, 100 and 200 devices on real time, at 1 s and
 * 5 s. Each Modbus TCP host is a pair of simulator servers on its own loopback address
 * (127.0.0.2, .3, …): an inverter with up to 16 battery blocks as units behind it, and a meter;
 * a host holds 18 devices at most, so 200 devices are 12 hosts. The simulator runs in this
 * process, so none of its memory or CPU is counted.
 *
 * Per size, after a settle: CPU share of one core and private memory (smaps_rollup) over the
 * window; the poll schedule's jitter (how far each device's poll-to-poll time is from the
 * period, p50 and p99 over every poll of the window); then one bucket close (every stream's
 * bucket written in one transaction, as the close timer does), its time and bytes written; SQLite
 * writes per day = the window's write rate (energy-state saves) over a day plus 96 closes.
 * Baseline in the same run: the 10-device site, to which the growth per device is measured.
 *
 *   npm run build && node --import tsx bench/scale.ts [windowSeconds] [sizes] [periods]
 *   e.g. node --import tsx bench/scale.ts 30 10,50,100,200 1,5
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScaledClock } from '../src/core/clock.js';
import { defaultSimConfig } from '../src/sim/config.js';
import { type SimServers, startSimServers } from '../src/sim/servers.js';
import { SimSite } from '../src/sim/site.js';
import { unitRuntime } from '../test/support/unit-runtime.js';
import { proc } from './lib/proc.js';

const WINDOW_S = Number(process.argv[2] ?? 30);
const SIZES = (process.argv[3] ?? '10,50,100,200').split(',').map(Number);
const PERIODS = (process.argv[4] ?? '1,5').split(',').map(Number);
const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 10);
const PER_HOST = 18;
const root = fileURLToPath(new URL('..', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (!existsSync(join(root, 'dist/main.js'))) {
  console.log('scale: SKIPPED, dist/ is missing (npm run build first)');
  process.exit(0);
}

interface Host {
  servers: SimServers;
  batteries: number;
}

async function startHosts(n: number): Promise<Host[]> {
  const hosts = Math.ceil(n / PER_HOST);
  const out: Host[] = [];
  for (let h = 0; h < hosts; h++) {
    // an inverter and a meter per host, the rest battery blocks, spread evenly
    const batteries = Math.floor((n - 2 * hosts) / hosts) + (h < (n - 2 * hosts) % hosts ? 1 : 0);
    const sim = defaultSimConfig();
    sim.battery.blocks = Array.from({ length: Math.max(1, batteries) }, () => ({ ...sim.battery.blocks[0]! }));
    const clock = new ScaledClock(1);
    const site = new SimSite(sim, clock.now());
    out.push({ servers: await startSimServers(site, clock, { host: `127.0.0.${h + 2}` }), batteries });
  }
  return out;
}

function siteYaml(hosts: Host[], dir: string, period: number): string {
  const devices: string[] = [];
  hosts.forEach((h, i) => {
    const inv = h.servers.inverter;
    const met = h.servers.meter;
    devices.push(
      `  - { id: inv-${i}, role: inverter, profile: sunspec, connection: { type: tcp, host: ${inv.host}, port: ${inv.port}, unitId: 1 } }`,
    );
    for (let b = 0; b < h.batteries; b++)
      devices.push(
        `  - { id: bat-${i}-${b}, role: battery, profile: sunspec, inverter: inv-${i}, connection: { type: tcp, host: ${inv.host}, port: ${inv.port}, unitId: ${b + 2} } }`,
      );
    devices.push(
      `  - { id: meter-${i}, role: ${i === 0 ? 'grid-meter' : 'consumption-meter'}, profile: sunspec, connection: { type: tcp, host: ${met.host}, port: ${met.port}, unitId: 1 } }`,
    );
  });
  return `version: 1
site: { id: scale, name: Scale bench, timezone: Europe/Berlin, currency: EUR, location: { latitude: 52.5, longitude: 13.4 } }
http: { host: 127.0.0.1, port: 0 }
dataDir: ${JSON.stringify(dir)}
poll: { intervalSeconds: ${period} }
devices:
${devices.join('\n')}
`;
}

type Msg = Record<string, number | boolean>;
function ask(child: ChildProcess, m: object): Promise<Msg> {
  return new Promise((resolve) => {
    child.once('message', (r: Msg) => resolve(r));
    child.send(m);
  });
}

interface Row {
  devices: number;
  period: number;
  streams: number;
  hosts: number;
  cpu: number;
  privateMB: number;
  p50: number;
  p99: number;
  pollsPerS: number;
  closeMs: number;
  buckets: number;
  mbPerDay: number;
}

const runtime = unitRuntime();
const rows: Row[] = [];
for (const period of PERIODS) {
  for (const n of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-scale-'));
    const hosts = await startHosts(n);
    const config = join(dir, 'site.yaml');
    writeFileSync(config, siteYaml(hosts, dir, period));
    const child = fork(join(root, 'bench/lib/scale-gateway.mjs'), [config], {
      execArgv: runtime.args,
      env: { ...process.env, ...runtime.env, SITEGW_LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    try {
      const ready = await new Promise<Msg>((resolve, reject) => {
        child.once('message', (m: Msg) => resolve(m));
        child.once('exit', (c) => reject(new Error(`the gateway exited (${c})`)));
      });
      await sleep(SETTLE_S * 1000);
      const p = proc(child.pid!);
      const start = await ask(child, { reset: true });
      const cpu0 = p.cpuSeconds();
      const t0 = performance.now();
      const priv: number[] = [];
      for (let i = 0; i < WINDOW_S; i++) {
        await sleep(1000);
        if (i % 5 === 4) priv.push(p.shares().privateMB);
      }
      const s = (performance.now() - t0) / 1000;
      const cpu = ((p.cpuSeconds() - cpu0) / s) * 100;
      const st = await ask(child, { stats: true });
      const close = await ask(child, { close: true });
      const perDay =
        (((st.wchar as number) - (start.wchar as number)) / s) * 86_400 + 96 * (close.closeBytes as number);
      rows.push({
        devices: n,
        period,
        streams: ready.streams as number,
        hosts: hosts.length,
        cpu,
        privateMB: Math.max(...priv),
        p50: st.p50 as number,
        p99: st.p99 as number,
        pollsPerS: (st.polls as number) / s,
        closeMs: close.closeMs as number,
        buckets: close.buckets as number,
        mbPerDay: perDay / 1e6,
      });
      console.error(JSON.stringify(rows.at(-1)));
    } finally {
      if (child.exitCode === null) child.kill();
      await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(null)));
      await Promise.all(hosts.map((h) => h.servers.close()));
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

console.log(
  `the built gateway with the unit's flags (${runtime.args.join(' ')}), ${WINDOW_S} s window after ${SETTLE_S} s; Node ${process.versions.node}`,
);
console.log('');
console.log(
  '| devices (hosts, streams) | poll | CPU of one core | private MB | poll jitter p50 / p99 ms | device polls/s | bucket close ms (buckets) | SQLite writes MB/day |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(
    `| ${r.devices} (${r.hosts}, ${r.streams}) | ${r.period} s | ${r.cpu.toFixed(1)} % | ${r.privateMB.toFixed(1)} | ${r.p50.toFixed(1)} / ${r.p99.toFixed(1)} | ${r.pollsPerS.toFixed(0)} | ${r.closeMs.toFixed(1)} (${r.buckets}) | ${r.mbPerDay.toFixed(1)} |`,
  );
}
console.log('');
for (const period of PERIODS) {
  const of = rows.filter((r) => r.period === period);
  const base = of.find((r) => r.devices === Math.min(...SIZES));
  const top = of.find((r) => r.devices === Math.max(...SIZES));
  if (!base || !top || base === top) continue;
  const d = top.devices - base.devices;
  console.log(
    `growth per device, ${base.devices} → ${top.devices} at ${period} s: CPU ${((top.cpu - base.cpu) / d).toFixed(3)} % of a core, private ${(((top.privateMB - base.privateMB) / d) * 1000).toFixed(0)} kB, close ${((top.closeMs - base.closeMs) / d).toFixed(3)} ms, writes ${(((top.mbPerDay - base.mbPerDay) / d) * 1000).toFixed(0)} kB/day`,
  );
}
