/**
 * `sitegw check-config FILE`: lets an installer validate site.yaml before enabling the service,
 * and tells them in one screen what the daemon will see.
 */
import { parseArgs } from 'node:util';
import type { DeviceConfig, SiteConfig } from '../config/types.js';
import { describeConnection } from '../modbus/link.js';
import { limitsSection } from './check-limits.js';
import { loadSiteConfig } from './config.js';
import { EXIT, type Output, printUsage, stdio } from './output.js';

function describeDevice(d: DeviceConfig, config: SiteConfig): string {
  const parts = [
    `  ${d.id}`,
    d.role,
    `profile ${d.profile}`,
    describeConnection(d.connection),
    `every ${d.pollIntervalSeconds ?? config.poll.intervalSeconds}s`,
  ];
  if (d.inverter) parts.push(`on ${d.inverter}`);
  if (d.name) parts.push(`"${d.name}"`);
  return parts.join(', ');
}

function summarize(config: SiteConfig): string[] {
  const n = config.devices.length;
  return [
    `OK: site '${config.site.id}' with ${n} device${n === 1 ? '' : 's'}`,
    ...config.devices.map((d) => describeDevice(d, config)),
  ];
}

/** Exit 0 when valid, 1 when invalid, 2 when unreadable (EXIT in output.ts). */
export async function checkConfigCommand(file: string, io: Output = stdio, offline = false): Promise<number> {
  const loaded = await loadSiteConfig(file, io);
  if (!loaded.ok) return loaded.exit;
  for (const line of summarize(loaded.config)) io.out(`${line}\n`);
  // with site limits: each inverter's behaviour when the gateway is gone (docs/limits.md)
  for (const line of await limitsSection(loaded.config, offline)) io.out(`${line}\n`);
  return EXIT.OK;
}

export async function checkConfigArgs(argv: string[], io: Output = stdio): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { offline: { type: 'boolean', default: false } },
  });
  const [file, ...more] = positionals;
  if (file === undefined || more.length > 0) {
    printUsage(io, ['sitegw check-config FILE [--offline]']);
    return EXIT.USAGE;
  }
  return checkConfigCommand(file, io, values.offline);
}
