/**
 * The gateway's poll path against a bare modbus-serial loop, over real Modbus TCP to the same
 * simulator in the same run:
 *   - gateway: Poller.cycle() of the simulated inverter host's three devices (hybrid inverter,
 *     two battery BMSs) on one TCP bus (BusRegistry → TcpBus queue, per-unit backoff, timeouts),
 *     SunSpec decoding, readings on the event bus into the bucketer;
 *   - baseline: one modbus-serial client reading exactly the register blocks the gateway read in
 *     one steady-state cycle (recorded from the bus), in the same order, and nothing else.
 * Reported: median ms per cycle, the ratio to the baseline (target ≤ 1.2×), and requests per
 * second on the one bus. The simulator's clock stands still, so both sides are served identical
 * images at identical cost.
 *
 *   node --expose-gc --import tsx bench/poll-path.ts [cycles]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ModbusRTU as ModbusClientType } from 'modbus-serial/ModbusRTU.js';
import { ManualClock } from '../src/core/clock.js';
import { EventBus } from '../src/core/events.js';
import { silentLogger } from '../src/core/log.js';
import type { RegisterReader } from '../src/core/register-reader.js';
import { BusRegistry } from '../src/modbus/buses.js';
import { Poller } from '../src/poller/poller.js';
import { loadProfiles } from '../src/profiles/index.js';
import { parseConfig } from '../src/profiles/site-config.js';
import { startSimServers } from '../src/sim/servers.js';
import { SimSite } from '../src/sim/site.js';
import { Site } from '../src/site/site.js';
import { openDatabase } from '../src/store/db.js';
import { Bucketer } from '../src/telemetry/bucketer.js';
import { median } from './lib/stats.js';

const CYCLES = Number(process.argv[2] ?? 300);
const T0 = Date.parse('2026-06-21T10:00:00Z');
const require = createRequire(import.meta.url);
const ModbusClient = require('modbus-serial') as typeof ModbusClientType;

type Block = { fn: 'holding' | 'input'; unit: number; address: number; length: number };

const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-'));
const clock = new ManualClock(T0);
const sim = new SimSite(undefined, T0);
const servers = await startSimServers(sim, clock);
const { host, port } = servers.inverter;
try {
  const yaml = `site: { id: bench, name: Bench, timezone: Europe/Berlin, currency: EUR, location: { latitude: 52.5, longitude: 13.4 } }
dataDir: ${JSON.stringify(dir)}
devices:
  - { id: inverter, role: inverter, profile: sunspec, connection: { type: tcp, host: ${host}, port: ${port}, unitId: 1 } }
  - { id: battery-1, role: battery, profile: sunspec, connection: { type: tcp, host: ${host}, port: ${port}, unitId: 2 } }
  - { id: battery-2, role: battery, profile: sunspec, connection: { type: tcp, host: ${host}, port: ${port}, unitId: 3 } }
`;
  const parsed = parseConfig(yaml, 'bench.yaml', dir);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const config = parsed.config;
  const site = new Site(config);
  const db = openDatabase(join(dir, 'bench.db'));
  const events = new EventBus();
  const bucketer = new Bucketer({ db, streams: site.streams(), pollPeriodMs: 10_000, bus: events });
  bucketer.start();
  events.on('reading', (r) => bucketer.ingest(r));
  events.on('streamsChanged', () => bucketer.setStreams(site.streams()));

  const buses = new BusRegistry();
  let recording: Block[] | null = null;
  const recorded = (d: (typeof config.devices)[number]): RegisterReader => {
    const r = buses.readerFor(d);
    return {
      readHolding: (unit, address, length) => {
        recording?.push({ fn: 'holding', unit, address, length });
        return r.readHolding(unit, address, length);
      },
      readInput: (unit, address, length) => {
        recording?.push({ fn: 'input', unit, address, length });
        return r.readInput(unit, address, length);
      },
    };
  };
  const poller = new Poller({
    site,
    bus: events,
    clock,
    readerFor: recorded,
    log: silentLogger(),
    profiles: loadProfiles(),
  });
  let t = T0;
  // every device due in every cycle: its poll period has passed
  const cycle = async () => {
    t += 10_000;
    const readings = await poller.cycle(() => t);
    if (readings.length === 0) throw new Error('a poll cycle produced no readings');
  };

  // warm-up: discovery of the SunSpec maps, JIT
  for (let i = 0; i < 20; i++) await cycle();
  recording = [];
  await cycle();
  const blocks = recording;
  recording = null;

  const client = new ModbusClient();
  await client.connectTCP(host, { port });
  client.setTimeout(1000);
  const bare = async () => {
    for (const b of blocks) {
      client.setID(b.unit);
      const res =
        b.fn === 'holding'
          ? await client.readHoldingRegisters(b.address, b.length)
          : await client.readInputRegisters(b.address, b.length);
      if (res.data.length !== b.length) throw new Error('short read');
    }
  };
  for (let i = 0; i < 20; i++) await bare();

  const cases: [string, () => Promise<void>][] = [
    ['bare modbus-serial loop (baseline)', bare],
    ['gateway poll cycle', cycle],
  ];
  const samples = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  // interleaved so drift (GC, thermal, the simulator's sockets) hits both alike
  for (let r = 0; r < CYCLES; r++) {
    for (const [name, fn] of cases) {
      if (r % 50 === 0) (globalThis as { gc?: () => void }).gc?.();
      const t0 = performance.now();
      await fn();
      samples.get(name)!.push(performance.now() - t0);
    }
  }
  const base = median(samples.get(cases[0]![0])!);
  const registers = blocks.reduce((a, b) => a + b.length, 0);
  console.log(
    `one TCP bus, 3 SunSpec devices (inverter 1/103/160x4/124, two 802 BMSs): ${blocks.length} requests, ${registers} registers per cycle; ${CYCLES} cycles each`,
  );
  console.log('');
  console.log('| case                               | median ms/cycle | requests/s | ratio vs baseline |');
  console.log('|------------------------------------|----------------:|-----------:|------------------:|');
  for (const [name] of cases) {
    const m = median(samples.get(name)!);
    console.log(
      `| ${name.padEnd(34)} | ${m.toFixed(3).padStart(15)} | ${((blocks.length * 1000) / m).toFixed(0).padStart(10)} | ${(m / base).toFixed(2).padStart(16)}x |`,
    );
  }
  client.close(() => undefined);
  await buses.close();
  bucketer.stop();
  db.close();
} finally {
  await servers.close();
  rmSync(dir, { recursive: true, force: true });
}
