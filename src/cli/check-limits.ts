/**
 * `sitegw check-config`'s site-limits section (docs/limits.md "When the gateway is gone"): with
 * any limit in site.yaml, each inverter is asked over Modbus which active power limit it offers
 * (SunSpec 704 or 123, else its profile's `output` map) and what it does when the gateway stops
 * writing, so a device that reverts to unlimited (SunSpec 123), drops the limit, or of which no
 * source says, is named before the site relies on it. `--offline` skips the devices.
 */
import type { SiteConfig } from '../config/types.js';
import type { ActivePowerLimit } from '../core/active-power-limit.js';
import { BusRegistry } from '../modbus/buses.js';
import { toModbusError } from '../modbus/errors.js';
import { activePowerLimitFor } from '../profiles/power-limits.js';
import type { ProfileRegistry } from '../profiles/registry.js';

const LIMIT_KEYS = ['exportW', 'importW', 'generationW', 'failSafeW'] as const;

/** The lines of the section; empty when site.yaml sets no limit. */
export async function limitsSection(
  config: SiteConfig,
  offline: boolean,
  profiles?: ProfileRegistry,
): Promise<string[]> {
  const l = config.limits;
  const set = LIMIT_KEYS.filter((k) => l[k] !== undefined);
  if (set.length === 0) return [];
  const failSafe = l.failSafeW ?? l.exportW;
  const lines = [
    `limits: ${set.map((k) => `${k} ${l[k]} W`).join(', ')}; fail-safe ${failSafe === undefined ? 'none' : `${failSafe} W`}; devices revert after ${l.revertSeconds} s`,
  ];
  if (offline) return [...lines, '  (devices not asked: --offline)'];
  const buses = new BusRegistry();
  try {
    for (const d of config.devices.filter((x) => x.role === 'inverter')) {
      try {
        const limit = await activePowerLimitFor(d, buses.readerFor(d), l.revertSeconds, config.devices, profiles);
        if (!limit) {
          lines.push(`  WARNING ${d.id}: offers no active power limit sitegw can write: it cannot be curtailed`);
          continue;
        }
        if (limit.holds === 'export')
          lines.push(
            `  ${d.id}: limited through its own export limiter (device-export-limit): it holds the export limit at its own meter; a generation limit it cannot hold`,
          );
        lines.push(describeRevert(d.id, limit.revert, limit.revertKnown ?? true));
      } catch (err) {
        lines.push(`  WARNING ${d.id}: not asked: ${toModbusError(err).message}`);
      }
    }
  } finally {
    await buses.close();
  }
  return lines;
}

/** What `id` does with its limit once the gateway stops writing, in one line (WARNING unless it stays limited). */
function describeRevert(id: string, r: ActivePowerLimit['revert'], known: boolean): string {
  if (!known)
    return `  WARNING ${id}: no source says what it does with the limit when the gateway is gone: set its own export limiter to the fail-safe (docs/limits-vendors.md)`;
  if (r.kind === 'revert-values')
    return `  ${id}: falls to the fail-safe ${r.seconds} s after the gateway stops writing`;
  if (r.kind === 'revert-unlimited')
    return `  WARNING ${id}: reverts to UNLIMITED output ${r.seconds} s after the gateway stops writing: set the inverter's own export limiter to the fail-safe (docs/limits.md)`;
  if (r.kind === 'keep-alive')
    return `  WARNING ${id}: drops the limit ${r.seconds} s after the gateway stops writing (reverts to unlimited): set its own export limiter`;
  return `  ${id}: keeps the last limit written when the gateway is gone`;
}
