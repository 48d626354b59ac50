/**
 * `sitegw check-config FILE`: lets an installer validate site.yaml before enabling the service,
 * and tells them in one screen what the daemon will see.
 */
import type { DeviceConfig, SiteConfig } from '../config/types.js';
import { describeConnection } from '../modbus/link.js';
import { loadConfig } from '../profiles/site-config.js';
import { formatConfigErrors } from '../yaml/format.js';

export interface CheckOutput {
  out: (line: string) => void;
  err: (line: string) => void;
}

const consoleOutput: CheckOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** Exit codes of check-config; 2 lets scripts tell "fix the file" from "wrong path". */
export const CHECK_OK = 0;
export const CHECK_INVALID = 1;
export const CHECK_UNREADABLE = 2;

function describeDevice(d: DeviceConfig, config: SiteConfig): string {
  const c = d.connection;
  const parts = [
    `  ${d.id}`,
    d.role,
    `profile ${d.profile}`,
    describeConnection(c),
    `every ${d.pollIntervalSeconds ?? config.poll.intervalSeconds}s`,
  ];
  if (d.inverter) parts.push(`on ${d.inverter}`);
  if (d.name) parts.push(`"${d.name}"`);
  return parts.join(', ');
}

export function summarize(config: SiteConfig): string[] {
  const n = config.devices.length;
  return [
    `OK: site '${config.site.id}' with ${n} device${n === 1 ? '' : 's'}`,
    ...config.devices.map((d) => describeDevice(d, config)),
  ];
}

export async function checkConfigCommand(file: string, output: CheckOutput = consoleOutput): Promise<number> {
  const result = await loadConfig(file);
  if (result.ok) {
    for (const line of summarize(result.config)) output.out(line);
    return CHECK_OK;
  }
  for (const line of formatConfigErrors(result.errors, file)) output.err(line);
  if (result.unreadable) return CHECK_UNREADABLE;
  const n = result.errors.length;
  output.err(`${n} error${n === 1 ? '' : 's'} in ${file}`);
  return CHECK_INVALID;
}
