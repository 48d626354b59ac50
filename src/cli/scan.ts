/**
 * `sitegw scan --tcp HOST[:PORT] | --rtu DEVICE --baud N [--parity P] [--stop-bits N]
 *  [--units 1-247] [--timeout MS]`: sweeps unit ids and prints what answered (src/discovery/scan-report.ts).
 * Exit 0 when a device was found, 1 when none was, 2 for a usage mistake or a link that cannot be
 * opened at all.
 */
import { parseArgs } from 'node:util';
import { parseUnits, scanBus } from '../discovery/scan.js';
import { formatScanReport, ranges, type ScanLink } from '../discovery/scan-report.js';
import { ModbusError } from '../modbus/errors.js';
import type { QueuedBus } from '../modbus/queued-bus.js';
import { TcpBus } from '../modbus/tcp-bus.js';
import { installedProfiles } from '../profiles/registry.js';
import { rtuScanBus, ScanRequestError, tcpTarget } from '../setup/scan.js';
import { choiceOption, intOption, lineSettings, PARITIES } from './options.js';
import { EXIT, isUsageMistake, type Output, printError, printFailure, stdio, UsageError } from './output.js';

/**
 * Over TCP most devices sit at unit 1 (or 0), and a gateway may take seconds to say a unit is
 * absent, so a full sweep is opt-in. The vendors' fixed ids (docs/devices.md): 3 SMA's own
 * Modbus profile (in 1-10), 71 KOSTAL, 100 a Victron GX's system unit, 126 SMA's SunSpec unit,
 * 200 and 240 Fronius meters, 247 GoodWe and Fox ESS.
 */
export const TCP_DEFAULT_UNITS = '1-10,71,100,126,200,240,247';
export const RTU_DEFAULT_UNITS = '1-247';

const TIMEOUT = { min: 20, max: 10_000, what: 'milliseconds from 20 to 10000' };

/** 'HOST', 'HOST:PORT', '[v6]:PORT' → host and port (502 by default) */
export function parseTcpTarget(spec: string): { host: string; port: number } {
  try {
    return tcpTarget(spec);
  } catch (e) {
    if (e instanceof ScanRequestError) throw new UsageError(`--tcp: ${e.message}`);
    throw e;
  }
}

export interface ScanPlan {
  link: ScanLink;
  units: number[];
  timeoutMs: number;
  bus: QueuedBus;
  /** the longest the sweep of silent units can take, ms */
  boundMs: number;
}

function unitsOf(spec: string): number[] {
  try {
    return parseUnits(spec);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function planScan(argv: string[]): ScanPlan {
  const { values } = parseArgs({
    args: argv,
    options: {
      tcp: { type: 'string' },
      rtu: { type: 'string' },
      baud: { type: 'string' },
      parity: { type: 'string' },
      'stop-bits': { type: 'string' },
      units: { type: 'string' },
      timeout: { type: 'string' },
    },
  });
  if ((values.tcp === undefined) === (values.rtu === undefined)) {
    throw new UsageError('give either --tcp HOST[:PORT] or --rtu DEVICE --baud N');
  }
  // no backoff while scanning: every unit is asked once, a timeout is the answer
  const backoff = { failuresBeforeBackoff: Number.POSITIVE_INFINITY };
  if (values.tcp !== undefined) {
    for (const k of ['baud', 'parity', 'stop-bits'] as const) {
      if (values[k] !== undefined) throw new UsageError(`--${k} applies to --rtu only`);
    }
    const { host, port } = parseTcpTarget(values.tcp);
    const units = unitsOf(values.units ?? TCP_DEFAULT_UNITS);
    const timeoutMs = intOption('timeout', values.timeout, 500, TIMEOUT);
    const bus = new TcpBus({ host, port, timeoutMs, backoff, maxBackoffMs: 1000 });
    return { link: { type: 'tcp', host, port }, units, timeoutMs, bus, boundMs: units.length * timeoutMs };
  }
  const device = values.rtu ?? '';
  if (!device.startsWith('/')) {
    throw new UsageError(`--rtu: give the serial device path, e.g. /dev/ttyUSB0, got '${device}'`);
  }
  if (values.baud === undefined) {
    throw new UsageError('--rtu needs --baud N (the line speed set on the devices, e.g. 9600)');
  }
  const baud = { min: 1200, max: 115200, what: 'a baud rate from 1200 to 115200' };
  const baudRate = intOption('baud', values.baud, 9600, baud);
  const parity = choiceOption('parity', values.parity, 'none', PARITIES);
  const stopBits = intOption('stop-bits', values['stop-bits'], 1, { min: 1, max: 2, what: '1 or 2' }) === 2 ? 2 : 1;
  const units = unitsOf(values.units ?? RTU_DEFAULT_UNITS);
  if (units.includes(0)) throw new UsageError('--units: 0 is the broadcast address on a serial line; start at 1');
  const timeoutMs = intOption('timeout', values.timeout, 200, TIMEOUT);
  const link = { type: 'rtu', device, baudRate, parity, stopBits } as const;
  const { bus, boundMs } = rtuScanBus(link, timeoutMs, units.length, backoff);
  return { link, units, timeoutMs, bus, boundMs };
}

export async function scanCommand(argv: string[], io: Output = stdio): Promise<number> {
  let plan: ScanPlan;
  try {
    plan = planScan(argv);
  } catch (err) {
    if (isUsageMistake(err)) return printFailure(io, 'scan', err);
    throw err;
  }
  const { link, units, bus } = plan;
  const where =
    link.type === 'tcp'
      ? `${link.host}:${link.port} (Modbus TCP)`
      : `${link.device} (Modbus RTU ${lineSettings(link.baudRate, link.parity, link.stopBits)})`;
  const bound = Math.ceil(plan.boundMs / 1000);
  io.err(
    `Scanning ${where}, unit ids ${ranges(units)}, ${plan.timeoutMs} ms per unit: ` +
      `at most about ${bound} s for silent units.\n`,
  );
  const dir = installedProfiles();
  for (const [name] of dir.broken) io.err(`(device profile ${name} has mistakes and is left out of the scan)\n`);
  let done = 0;
  try {
    const result = await scanBus(bus, {
      units,
      profiles: [...dir.profiles.values()],
      onUnit: () => {
        if (++done % 25 === 0 && done < units.length) io.err(`  ${done} of ${units.length} unit ids asked...\n`);
      },
    });
    io.out(formatScanReport(result, link));
    return result.found.length > 0 ? EXIT.OK : EXIT.FAILURE;
  } catch (err) {
    if (err instanceof ModbusError && err.kind === 'connection') {
      printError(io, 'scan', err.message);
      return EXIT.USAGE;
    }
    throw err;
  } finally {
    await bus.close();
  }
}
