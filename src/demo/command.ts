import { parseArgs } from 'node:util';
import type { Logger } from 'pino';
import { ScaledClock } from '../core/clock.js';
import { createLogger } from '../core/log.js';
import { defaultSimConfig, GRID_METER_DESCRIPTIONS, GRID_METER_KINDS, type GridMeterKind } from '../sim/config.js';
import { startSimRtuServer, type SimRtuServer } from '../sim/rtu-server.js';
import { startSimServers } from '../sim/servers.js';
import { SimSite } from '../sim/site.js';
import { accessHelp, credentialsFile } from './credentials.js';
import { startDemo } from './demo.js';

type UntilSignal = (stop: () => Promise<void>, log?: Logger) => Promise<number>;

function intOption(name: string, v: string | undefined, fallback: number, min: number, max: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be a whole number from ${min} to ${max}, got '${v}'`);
  return n;
}

function numberOption(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got '${v}'`);
  return n;
}

export async function demoCommand(argv: string[], untilSignal: UntilSignal): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      history: { type: 'string' },
      speed: { type: 'string' },
      mqtt: { type: 'string' },
      homeassistant: { type: 'string' },
    },
  });
  const demo = await startDemo({
    port: intOption('port', values.port, 8080, 0, 65535),
    host: values.host ?? '127.0.0.1',
    dataDir: values['data-dir'] ?? './data',
    history: values.history,
    speed: numberOption('speed', values.speed, 1),
    modbusPorts: 'auto',
    log: createLogger(),
    mqtt: values.mqtt,
    homeassistant: values.homeassistant,
  });
  const now = new Date(demo.clock.now());
  const from = new Date(now.getTime() - 6 * 3_600_000).toISOString().slice(0, 16) + ':00Z';
  const grid = demo.daemon.site.streams().find((s) => s.id.endsWith('__GRID_METER_DERIVED'))?.id ?? '';
  process.stdout.write(`
sitegw demo is running: a simulated home (PV, two battery blocks, hybrid inverter, grid and house meters)
  Modbus TCP (SunSpec):  inverter ${demo.servers.inverter.host}:${demo.servers.inverter.port}, meters ${demo.servers.meter.host}:${demo.servers.meter.port}
  Energy Site API:       ${demo.url}
  OpenAPI document:      ${demo.url}/openapi.json
  Clock:                 ${demo.clock.speed}x real time, simulated now ${now.toISOString()}
  WebSocket streams:     ${demo.url.replace(/^http/, 'ws')}/ws?streams=telemetry-realtime,grid-events (same bearer token)
${demo.daemon.uplink ? `  MQTT uplink:           ${demo.daemon.uplink.health().broker} (topics below ${demo.daemon.ctx.config.uplink!.topicPrefix}/)\n` : ''}${demo.daemon.ctx.config.homeassistant ? `  Home Assistant:        ${demo.daemon.ctx.config.homeassistant.url} (discovery below ${demo.daemon.ctx.config.homeassistant.discoveryPrefix}/)\n` : ''}  Simulator control:     curl -X POST ${demo.simControl.url}/grid-outage -d '{"on":true}'   (opens the grid relay; false closes it)

${accessHelp(demo.credentials, credentialsFile(demo.daemon.ctx.config.dataDir), [
    `${demo.url}/api/v1/sites/${demo.siteId}/topology`,
    `${demo.url}/api/v1/devices/${grid}/telemetry?interval=${from}/PT6H&include=default,energy`,
  ])}
Ctrl-C stops it; data stays in the data directory.
`);
  return untilSignal(() => demo.stop(), demo.daemon.ctx.log);
}

export async function simulateCommand(argv: string[], untilSignal: UntilSignal): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      host: { type: 'string' },
      'inverter-port': { type: 'string' },
      'meter-port': { type: 'string' },
      speed: { type: 'string' },
      'grid-meter': { type: 'string' },
      rtu: { type: 'string' },
      'rtu-host': { type: 'string' },
      baud: { type: 'string' },
      parity: { type: 'string' },
    },
  });
  const gridMeter = values['grid-meter'] ?? 'sunspec';
  if (!(GRID_METER_KINDS as readonly string[]).includes(gridMeter)) throw new Error(`--grid-meter must be one of ${GRID_METER_KINDS.join(', ')}, got '${gridMeter}'`);
  const rtuHost = values['rtu-host'] ?? 'meter';
  if (rtuHost !== 'meter' && rtuHost !== 'inverter') throw new Error(`--rtu-host must be meter or inverter, got '${rtuHost}'`);
  const parity = values.parity ?? 'none';
  if (parity !== 'none' && parity !== 'even' && parity !== 'odd') throw new Error(`--parity must be none, even or odd, got '${parity}'`);
  const clock = new ScaledClock(numberOption('speed', values.speed, 1));
  const sim = new SimSite({ ...defaultSimConfig(), gridMeter: gridMeter as GridMeterKind }, clock.now());
  const servers = await startSimServers(sim, clock, {
    host: values.host ?? '127.0.0.1',
    inverterPort: intOption('inverter-port', values['inverter-port'], 1502, 0, 65535),
    meterPort: intOption('meter-port', values['meter-port'], 1503, 0, 65535),
  });
  process.stdout.write(`simulated site listening (Modbus TCP, SunSpec at 40000):
  inverter host ${servers.inverter.host}:${servers.inverter.port}: unit 1 inverter (1, 103, 160, 124), units 2.. battery blocks (1, 802)
  meter host    ${servers.meter.host}:${servers.meter.port}: unit 1 ${GRID_METER_DESCRIPTIONS[gridMeter as GridMeterKind]}, unit 2 consumption meter (1, 203)
`);
  let rtu: SimRtuServer | undefined;
  if (values.rtu !== undefined) {
    const baudRate = intOption('baud', values.baud, 9600, 1200, 115200);
    try {
      rtu = await startSimRtuServer(sim, clock, { path: values.rtu, host: rtuHost, baudRate, parity, faults: servers.faults });
    } catch (err) {
      await servers.close();
      throw new Error(`cannot serve Modbus RTU on ${values.rtu}: ${(err as Error).message}`);
    }
    process.stdout.write(`  and the ${rtuHost} host's units over Modbus RTU on ${values.rtu} (${baudRate} 8${parity[0]!.toUpperCase()}1)\n`);
  }
  return untilSignal(async () => {
    await rtu?.close();
    await servers.close();
  });
}
