/** `sitegw simulate`: only the simulated site's Modbus servers (src/sim/), until a signal. */
import { parseArgs } from 'node:util';
import { ScaledClock } from '../core/clock.js';
import { defaultSimConfig, GRID_METER_DESCRIPTIONS, GRID_METER_KINDS } from '../sim/config.js';
import { type SimRtuServer, startSimRtuServer } from '../sim/rtu-server.js';
import { startSimServers } from '../sim/servers.js';
import { SimSite } from '../sim/site.js';
import { choiceOption, intOption, lineSettings, PARITIES, positiveOption, valuesOrMistake } from './options.js';
import { EXIT, type Output, stdio } from './output.js';
import { watchSignals } from './until-signal.js';

export async function simulateCommand(argv: string[], io: Output = stdio): Promise<number> {
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
  const o = valuesOrMistake(io, 'simulate', () => ({
    host: values.host ?? '127.0.0.1',
    gridMeter: choiceOption('grid-meter', values['grid-meter'], 'sunspec', GRID_METER_KINDS),
    rtuHost: choiceOption('rtu-host', values['rtu-host'], 'meter', ['meter', 'inverter'] as const),
    parity: choiceOption('parity', values.parity, 'none', PARITIES),
    speed: positiveOption('speed', values.speed, 1),
    inverterPort: intOption('inverter-port', values['inverter-port'], 1502, { min: 0, max: 65535 }),
    meterPort: intOption('meter-port', values['meter-port'], 1503, { min: 0, max: 65535 }),
    rtu: values.rtu,
    // looked at with --rtu only, as it always was
    baudRate: values.rtu === undefined ? 9600 : intOption('baud', values.baud, 9600, { min: 1200, max: 115200 }),
  }));
  if (!o) return EXIT.FAILURE;
  const signals = watchSignals(io);
  const clock = new ScaledClock(o.speed);
  const sim = new SimSite({ ...defaultSimConfig(), gridMeter: o.gridMeter }, clock.now());
  const { host, inverterPort, meterPort } = o;
  const servers = await startSimServers(sim, clock, { host, inverterPort, meterPort });
  const { inverter, meter } = servers;
  const grid = GRID_METER_DESCRIPTIONS[o.gridMeter];
  io.out(`simulated site listening (Modbus TCP, SunSpec at 40000):
  inverter host ${inverter.host}:${inverter.port}: unit 1 inverter (1, 103, 160, 124), units 2.. battery blocks (1, 802)
  meter host    ${meter.host}:${meter.port}: unit 1 ${grid}, unit 2 consumption meter (1, 203)
`);
  let rtu: SimRtuServer | undefined;
  if (o.rtu !== undefined) {
    const { rtu: path, rtuHost, baudRate, parity } = o;
    try {
      rtu = await startSimRtuServer(sim, clock, { path, host: rtuHost, baudRate, parity, faults: servers.faults });
    } catch (err) {
      await servers.close();
      throw new Error(`cannot serve Modbus RTU on ${path}: ${(err as Error).message}`);
    }
    const settings = lineSettings(baudRate, parity, 1);
    io.out(`  and the ${rtuHost} host's units over Modbus RTU on ${path} (${settings})\n`);
  }
  return signals.until(async () => {
    await rtu?.close();
    await servers.close();
  });
}
