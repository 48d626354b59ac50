/**
 * How the gateway grows with the site (issue 32): the built daemon (bench/lib/scale-gateway.mjs,
 * the unit's node flags) polling sites of 10, 50, 100 and 200 devices on real time, at 1 s and
 * 5 s. Each Modbus TCP host is a pair of simulator servers on its own loopback address
 * (127.0.0.2, .3, …): an inverter with up to 16 battery blocks as units behind it, and a meter;
 * a host holds 18 devices at most. A tenth of the devices (at least two: battery blocks and one
 * meter) are on one RS-485 line instead: a socat pty pair, the simulator's RTU server on one end
 * answering when a real line at BENCH_RTU_BAUD (default 9600, 8N1) would have carried the
 * request and the answer, the gateway's serial transport on the other. The simulator runs in
 * this process, so none of its memory or CPU is counted.
 *
 * Per size, after a settle: CPU share of one core and private memory (smaps_rollup) over the
 * window; the poll schedule's jitter (how far each device's poll-to-poll time is from the
 * period, p50 and p99 over every poll of the window) and failed polls, apart for TCP and the RTU
 * line, with the line's busy share (its bytes' character times and 3.5-character gaps); then
 * one bucket close (every stream's bucket written in one transaction, as the close timer does),
 * its time and bytes written; the window's own SQLite writes (pages dirtied) and the learned
 * facts saved in it (a device_facts row at a device's first poll: the settle waits, up to
 * QUIET_MAX_S more, until every device was polled and none was saved for 5 s). No writes a day are
 * extrapolated from here: a window on a fresh database holds none of a day's cost (a close's
 * pages grow as the buckets table does) and any late first poll counts thousands of times;
 * bench/disk-writes.ts --devices N runs the whole day. Then WS_CLIENTS real WebSocket clients (another process,
 * bench/lib/ws-clients.mjs) subscribed to telemetry-realtime get that bucket pushed WS_ROUNDS
 * times: from the push to the last client's last message, p50 and p99, and the gateway's CPU
 * for a push (building and writing the messages, and the event-loop turn after). Baseline in the same run: the 10-device site, to which the
 * growth per device is measured.
 *
 *   npm run build && node --import tsx bench/scale.ts [windowSeconds] [sizes] [periods]
 *   e.g. node --import tsx bench/scale.ts 30 10,50,100,200 1,5
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScaledClock } from '../src/core/clock.js';
import { defaultSimConfig } from '../src/sim/config.js';
import { type SimServers, startSimServers } from '../src/sim/servers.js';
import { SimSite } from '../src/sim/site.js';
import { HAVE_SOCAT, NO_SOCAT } from '../test/support/socat.js';
import { unitRuntime } from '../test/support/unit-runtime.js';
import { proc } from './lib/proc.js';
import { lineBusyMs, type RtuLine, rtuCount, startRtuLine } from './lib/scale-rtu.js';

const WINDOW_S = Number(process.argv[2] ?? 30);
const SIZES = (process.argv[3] ?? '10,50,100,200').split(',').map(Number);
const PERIODS = (process.argv[4] ?? '1,5').split(',').map(Number);
const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 10);
const QUIET_MAX_S = 60;
const PER_HOST = 18;
const BAUD = Number(process.env.BENCH_RTU_BAUD ?? 9600);
const WS_CLIENTS = Number(process.env.BENCH_WS_CLIENTS ?? 50);
const WS_ROUNDS = Number(process.env.BENCH_WS_ROUNDS ?? 20);
const root = fileURLToPath(new URL('..', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (!existsSync(join(root, 'dist/main.js'))) {
  console.log('scale: SKIPPED, dist/ is missing (npm run build first)');
  process.exit(0);
}
if (!HAVE_SOCAT) {
  console.log(`scale: SKIPPED, ${NO_SOCAT}`);
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

function siteYaml(hosts: Host[], line: RtuLine, dir: string, period: number): string {
  const devices: string[] = line.devices.map((d) => `  - ${d}`);
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
# one partner's dashboards: WS_CLIENTS sockets of one client id (8 by default)
limits: { http: { maxWebSocketsPerClient: ${Math.max(8, WS_CLIENTS)} } }
dataDir: ${JSON.stringify(dir)}
poll: { intervalSeconds: ${period} }
devices:
${devices.join('\n')}
`;
}

// IPC answers of bench/lib/*.mjs (plain JavaScript)
type Msg = Record<string, any>;
function ask(child: ChildProcess, m: object): Promise<Msg> {
  return new Promise((resolve) => {
    child.once('message', (r: Msg) => resolve(r));
    child.send(m);
  });
}

interface Group {
  p50: number;
  p99: number;
  polls: number;
  failed: number;
  pollMs: number;
}

interface Row {
  devices: number;
  rtu: number;
  period: number;
  streams: number;
  hosts: number;
  cpu: number;
  privateMB: number;
  tcp: Group;
  line: Group;
  /** the RTU line's busy share of the window at its baud rate, % */
  lineBusy: number;
  /** the line's busy time per device poll at 9600 and 19200 baud, ms */
  perPoll9600: number;
  perPoll19200: number;
  s: number;
  closeMs: number;
  buckets: number;
  /** pages dirtied in the window, kB, and the learned facts saved in it */
  windowKB: number;
  factsSaves: number;
  /** seconds the settle waited past SETTLE_S for every device's first poll and facts */
  quietS: number;
  wsEntries: number;
  wsShort: number;
  wsP50: number;
  wsP99: number;
  wsCpuMs: number;
  /** from the close's start (its transaction included) to the last client's last message */
  wsFirstMs: number;
}

/** WS_CLIENTS clients on the gateway; WS_ROUNDS pushes of the bucket just closed, each to the last client's last message */
async function wsRounds(child: ChildProcess, ready: Msg) {
  const clients = fork(join(root, 'bench/lib/ws-clients.mjs'), [
    JSON.stringify({
      tokenUrl: ready.tokenUrl,
      clientId: ready.client.id,
      secret: ready.client.secret,
      url: ready.url,
      clients: WS_CLIENTS,
    }),
  ]);
  const next = (key: string) =>
    new Promise<Msg>((resolve, reject) => {
      const on = (m: Msg) => {
        if (m.error) reject(new Error(m.error));
        else if (m[key]) {
          clients.off('message', on);
          resolve(m);
        }
      };
      clients.on('message', on);
    });
  try {
    await next('ready');
    const round = next('round');
    const close = await ask(child, { close: true });
    const first = await round;
    const ms: number[] = [];
    let short = first.short as number;
    let cpuMs = 0;
    for (let r = 0; r < WS_ROUNDS; r++) {
      const done = next('round');
      const push = await ask(child, { push: true });
      const got = await done;
      cpuMs += push.cpuMs;
      ms.push(got.lastAt - push.at);
      short += got.short;
    }
    ms.sort((a, b) => a - b);
    const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!;
    return {
      close,
      firstMs: first.lastAt - close.at,
      entries: first.entries as number,
      short,
      p50: at(0.5),
      p99: at(0.99),
      cpuMs: cpuMs / WS_ROUNDS,
    };
  } finally {
    clients.send({ exit: true });
    await new Promise((r) => (clients.exitCode === null ? clients.once('exit', r) : r(null)));
  }
}

const runtime = unitRuntime();
const rows: Row[] = [];
const load: string[] = [];
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
for (const period of PERIODS) {
  for (const n of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-scale-'));
    const rtu = rtuCount(n);
    const hosts = await startHosts(n - rtu);
    const line = await startRtuLine(n, BAUD, 'inv-0');
    const config = join(dir, 'site.yaml');
    writeFileSync(config, siteYaml(hosts, line, dir, period));
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
      const q0 = performance.now();
      while (performance.now() - q0 < QUIET_MAX_S * 1000 && !(await ask(child, { quiet: 5000 })).quiet)
        await sleep(1000);
      const quietS = (performance.now() - q0) / 1000;
      load.push(loadavg());
      const p = proc(child.pid!);
      const start = await ask(child, { reset: true });
      const traffic0 = { ...line.traffic };
      const cpu0 = p.cpuSeconds();
      const t0 = performance.now();
      const priv: number[] = [];
      for (let i = 0; i < WINDOW_S; i++) {
        await sleep(1000);
        if (i % 5 === 4) priv.push(p.shares().privateMB);
      }
      const s = (performance.now() - t0) / 1000;
      const cpuS = p.cpuSeconds() - cpu0;
      const cpu = (cpuS / s) * 100;
      const st = await ask(child, { stats: true });
      const traffic = { bytes: line.traffic.bytes - traffic0.bytes, answers: line.traffic.answers - traffic0.answers };
      const ws = await wsRounds(child, ready);
      const close = ws.close;
      const linePolls = Math.max(1, st.rtu.polls as number);
      rows.push({
        devices: n,
        rtu,
        period,
        streams: ready.streams as number,
        hosts: hosts.length,
        cpu,
        privateMB: Math.max(...priv),
        tcp: st.tcp,
        line: st.rtu,
        lineBusy: (lineBusyMs(traffic, BAUD) / (s * 1000)) * 100,
        perPoll9600: lineBusyMs(traffic, 9600) / linePolls,
        perPoll19200: lineBusyMs(traffic, 19200) / linePolls,
        s,
        closeMs: close.closeMs as number,
        buckets: close.buckets as number,
        windowKB: ((st.wchar as number) - (start.wchar as number)) / 1000,
        factsSaves: st.factsSaves as number,
        quietS,
        wsEntries: ws.entries,
        wsShort: ws.short,
        wsP50: ws.p50,
        wsP99: ws.p99,
        wsCpuMs: ws.cpuMs,
        wsFirstMs: ws.firstMs,
      });
      console.error(JSON.stringify({ ...rows.at(-1), load: load.at(-1) }));
    } finally {
      if (child.exitCode === null) child.send({ stop: true });
      const exited = new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(null)));
      const timer = setTimeout(() => child.kill(), 10_000);
      await exited;
      clearTimeout(timer);
      await line.close();
      await Promise.all(hosts.map((h) => h.servers.close()));
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

const f = (x: number, d = 1) => x.toFixed(d);
console.log(
  `the built gateway with the unit's flags (${runtime.args.join(' ')}), ${WINDOW_S} s window after ${SETTLE_S} s; Node ${process.versions.node}; RTU line ${BAUD} baud 8N1; ${WS_CLIENTS} WebSocket clients, ${WS_ROUNDS} pushes`,
);
console.log(`load average (1, 5, 15 min) at each size's window: ${load.join('; ')}`);
console.log('');
console.log(
  `| devices (TCP hosts, RTU, streams) | poll | CPU of one core | private MB | TCP poll jitter p50 / p99 ms (failed) | RTU line jitter p50 / p99 ms (failed), poll ms | RTU line busy | bucket close ms (buckets) | WS push to ${WS_CLIENTS} clients, p50 / p99 ms (entries) | close to last client ms | WS push CPU ms | SQLite writes in the window kB (facts saved) |`,
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(
    `| ${r.devices} (${r.hosts}, ${r.rtu}, ${r.streams}) | ${r.period} s | ${f(r.cpu)} % | ${f(r.privateMB)} | ${f(r.tcp.p50)} / ${f(r.tcp.p99)} (${r.tcp.failed}/${r.tcp.polls}) | ${f(r.line.p50)} / ${f(r.line.p99)} (${r.line.failed}/${r.line.polls}), ${f(r.line.pollMs, 0)} | ${f(r.lineBusy, 0)} % | ${f(r.closeMs)} (${r.buckets}) | ${f(r.wsP50)} / ${f(r.wsP99)} (${r.wsEntries}${r.wsShort ? `, ${r.wsShort} short` : ''}) | ${f(r.wsFirstMs)} | ${f(r.wsCpuMs)} | ${f(r.windowKB, 0)} (${r.factsSaves}) |`,
  );
}
console.log('');
for (const r of rows)
  console.log(
    `RTU line, ${r.devices} devices at ${r.period} s: ${f(r.perPoll9600)} ms of line per device poll at 9600 baud, ${f(r.perPoll19200)} at 19200: one line carries ${Math.floor(1000 / r.perPoll9600)} such devices at 1 s at 9600, ${Math.floor(1000 / r.perPoll19200)} at 19200 (line time only, no device turnaround)`,
  );
for (const r of rows)
  console.log(
    `${r.devices} devices at ${r.period} s: every device polled and no facts saved for 5 s ${f(r.quietS)} s after the ${SETTLE_S} s settle; in the window ${f(r.windowKB, 0)} kB of SQLite pages dirtied, ${r.factsSaves} facts saved`,
  );
console.log('');
for (const period of PERIODS) {
  const of = rows.filter((r) => r.period === period);
  const base = of.find((r) => r.devices === Math.min(...SIZES));
  const top = of.find((r) => r.devices === Math.max(...SIZES));
  if (!base || !top || base === top) continue;
  const d = top.devices - base.devices;
  console.log(
    `growth per device, ${base.devices} → ${top.devices} at ${period} s: CPU ${((top.cpu - base.cpu) / d).toFixed(3)} % of a core, private ${(((top.privateMB - base.privateMB) / d) * 1000).toFixed(0)} kB, close ${((top.closeMs - base.closeMs) / d).toFixed(3)} ms, WS push p50 ${((top.wsP50 - base.wsP50) / d).toFixed(3)} ms and ${((top.wsCpuMs - base.wsCpuMs) / d).toFixed(3)} CPU ms`,
  );
}
