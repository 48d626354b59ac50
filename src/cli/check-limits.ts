/**
 * `sitegw check-config`'s site-limits section (docs/limits.md "When the gateway is gone"): with
 * any limit in site.yaml, each inverter is asked over Modbus which active power limit it offers
 * and what it does when the gateway stops writing, so a device that reverts to unlimited (SunSpec
 * 123) is named before the site relies on it. `--offline` skips the devices.
 */
import type { SiteConfig } from '../config/types.js';
import { BusRegistry } from '../modbus/buses.js';
import { toModbusError } from '../modbus/errors.js';
import { activePowerLimitFor } from '../profiles/power-limits.js';

const LIMIT_KEYS = ['exportW', 'importW', 'generationW', 'failSafeW'] as const;

/** The lines of the section; empty when site.yaml sets no limit. */
export async function limitsSection(config: SiteConfig, offline: boolean): Promise<string[]> {
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
        const limit = await activePowerLimitFor(d, buses.readerFor(d), l.revertSeconds);
        if (!limit) {
          lines.push(`  WARNING ${d.id}: offers no active power limit sitegw can write: it cannot be curtailed`);
          continue;
        }
        const r = limit.revert;
        if (r.kind === 'revert-values')
          lines.push(`  ${d.id}: falls to the fail-safe ${r.seconds} s after the gateway stops writing`);
        else if (r.kind === 'revert-unlimited')
          lines.push(
            `  WARNING ${d.id}: reverts to UNLIMITED output ${r.seconds} s after the gateway stops writing (SunSpec 123): set the inverter's own export limiter to the fail-safe (docs/limits.md)`,
          );
        else if (r.kind === 'keep-alive')
          lines.push(
            `  WARNING ${d.id}: drops the limit ${r.seconds} s after the gateway stops writing: set its own export limiter`,
          );
        else lines.push(`  ${d.id}: keeps the last limit written when the gateway is gone`);
      } catch (err) {
        lines.push(`  WARNING ${d.id}: not asked: ${toModbusError(err).message}`);
      }
    }
  } finally {
    await buses.close();
  }
  return lines;
}
