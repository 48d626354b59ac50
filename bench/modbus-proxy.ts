/**
 * sitegw's poll schedule with and without Modbus proxy clients (docs/modbus-proxy.md), in one
 * run: the Sungrow image on a device that takes one TCP connection (test/support/
 * one-master-device.ts), three devices of it polled every second by the daemon, first alone
 * (baseline), then while four clients read through the proxy: Debian's mbpoll every second,
 * pymodbus and modbus-serial every 200 and 250 ms (registers sitegw reads too), and a greedy
 * modbus-serial client reading holding registers sitegw does not read, back to back.
 * Reported per phase: the poll start's deviation from its one-second period (p50, p99, max),
 * the poll's duration, polls failed and skipped (overruns), and what the clients got.
 *
 *   node --import tsx bench/modbus-proxy.ts [clientSeconds=600] [baselineSeconds=120]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { silentLogger } from '../src/core/log.js';
import { Daemon } from '../src/main.js';
import { ModbusRTU } from '../src/modbus/modbus-serial.js';
import { fixtureSiteConfig } from '../test/support/fixture-site.js';
import { freePort } from '../test/support/free-port.js';
import { mbpollReads, pymodbus } from '../test/support/modbus-clients.js';
import { startOneConnectionDevice } from '../test/support/one-master-device.js';

const CLIENT_S = Number(process.argv[2] ?? 600);
const BASE_S = Number(process.argv[3] ?? 120);
const PERIOD_MS = 1000;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

const device = await startOneConnectionDevice();
const dataDir = mkdtempSync(join(tmpdir(), 'sitegw-bench-proxy-'));
const proxyPort = await freePort();
const connection = { type: 'tcp', host: '127.0.0.1', port: device.port, unitId: 1 };
const config = fixtureSiteConfig({
  id: 'bench',
  name: 'Bench',
  dataDir,
  more: { poll: { intervalSeconds: PERIOD_MS / 1000 }, modbusProxy: [{ port: proxyPort, target: 'inv' }] },
  devices: [
    { id: 'inv', role: 'inverter', profile: 'sungrow-sh-rt', connection },
    { id: 'bat', role: 'battery', profile: 'sungrow-sh-rt', inverter: 'inv', connection },
    { id: 'grid', role: 'grid-meter', profile: 'sungrow-sh-rt', connection },
  ],
});
const daemon = await Daemon.start({ config, log: silentLogger() });

interface Phase {
  starts: number[];
  durations: number[];
  failed: number;
  overrunsAt: number;
}
const newPhase = (): Phase => ({ starts: [], durations: [], failed: 0, overrunsAt: daemon.ctx.poller.overruns });
let phase = newPhase();
daemon.ctx.bus.on('devicePolled', (e) => {
  if (e.deviceId !== 'inv') return;
  phase.starts.push(performance.now() - e.ms);
  phase.durations.push(e.ms);
  if (!e.ok) phase.failed++;
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function summary(name: string, p: Phase) {
  const dev = p.starts.slice(1).map((s, i) => Math.abs(s - p.starts[i]! - PERIOD_MS));
  return {
    name,
    polls: p.starts.length,
    devP50: pct(dev, 50),
    devP99: pct(dev, 99),
    devMax: Math.max(...dev),
    durP50: pct(p.durations, 50),
    durP99: pct(p.durations, 99),
    failed: p.failed,
    overruns: daemon.ctx.poller.overruns - p.overrunsAt,
  };
}

async function loopClient(
  stopAt: number,
  fn: 'input' | 'holding',
  address: number,
  count: number,
  everyMs: number,
): Promise<{ reads: number; errors: number }> {
  const c = new ModbusRTU();
  c.on('error', () => undefined);
  await c.connectTCP('127.0.0.1', { port: proxyPort });
  c.setID(1);
  c.setTimeout(5000);
  let reads = 0;
  let errors = 0;
  while (performance.now() < stopAt) {
    try {
      await (fn === 'input' ? c.readInputRegisters(address, count) : c.readHoldingRegisters(address, count));
      reads++;
    } catch {
      errors++;
    }
    if (everyMs > 0) await sleep(everyMs);
  }
  await new Promise<void>((r) => c.close(() => r()));
  return { reads, errors };
}

await sleep(3000); // past discovery
phase = newPhase();
await sleep(BASE_S * 1000);
const base = summary('baseline: sitegw alone', phase);
phase = newPhase();
const stopAt = performance.now() + CLIENT_S * 1000;
const [mb, py, ms, greedy] = await Promise.all([
  mbpollReads(proxyPort, 13022, 2, CLIENT_S, 1000).then((r) => ({ reads: r.length, errors: 0 })),
  pymodbus(proxyPort, 4999, 1, CLIENT_S * 5).then((r) => ({
    reads: r.reads.filter(Array.isArray).length,
    errors: r.reads.filter((x) => !Array.isArray(x)).length,
  })),
  loopClient(stopAt, 'input', 13022, 2, 250),
  loopClient(stopAt, 'holding', 13049, 3, 0),
]);
const withClients = summary('four proxy clients', phase);
const status = daemon.ctx.ops.status().modbusProxy.ports[0]!;

console.log(
  `\nsitegw polls 3 devices on one connection every ${PERIOD_MS} ms; 'inv' measured (Node ${process.version})\n`,
);
console.log(
  '| phase | polls | start deviation p50 / p99 / max (ms) | poll duration p50 / p99 (ms) | failed | overruns |',
);
console.log('|---|---:|---:|---:|---:|---:|');
for (const s of [base, withClients])
  console.log(
    `| ${s.name} | ${s.polls} | ${s.devP50.toFixed(1)} / ${s.devP99.toFixed(1)} / ${s.devMax.toFixed(1)} | ${s.durP50.toFixed(1)} / ${s.durP99.toFixed(1)} | ${s.failed} | ${s.overruns} |`,
  );
console.log('\n| client | reads | errors |');
console.log('|---|---:|---:|');
console.log(`| mbpoll, 2 input registers every 1 s | ${mb.reads} | ${mb.errors} |`);
console.log(`| pymodbus, 1 input register every 200 ms | ${py.reads} | ${py.errors} |`);
console.log(`| modbus-serial, 2 input registers every 250 ms | ${ms.reads} | ${ms.errors} |`);
console.log(`| modbus-serial, 3 holding registers back to back | ${greedy.reads} | ${greedy.errors} |`);
console.log(
  `\nproxy answers: ${JSON.stringify(status.answers)}; device connections accepted ${device.accepted}, refused ${device.refused}`,
);
const ok = withClients.devP99 < PERIOD_MS && withClients.failed === 0 && device.accepted === 1;
console.log(ok ? 'target met: p99 deviation under one poll period, one device connection' : 'TARGET MISSED');
await daemon.stop();
await device.close();
rmSync(dataDir, { recursive: true, force: true });
process.exit(ok ? 0 : 1);
