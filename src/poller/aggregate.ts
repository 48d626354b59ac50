import type { Reading } from '../core/channels.js';
import { streamIds } from '../core/streams.js';
import type { DevicePoll } from '../profiles/driver.js';
import type { Site } from '../site/site.js';

/**
 * The `__bb_agg` reading of an inverter's battery blocks from one poll cycle: power summed,
 * SoC and SoH weighted by capacity (equal weights until every capacity is known). Only built
 * when every block answered, so a missing block never shows up as a sudden drop in power.
 * A lifetime counter direction every block reports is summed, so the compact topology counts
 * what the blocks count; where one block has none, that direction is integrated from power.
 */
export function batteryAggregate(
  site: Site,
  inverterId: string,
  polls: ReadonlyMap<string, DevicePoll>,
): Reading | null {
  const blocks = site.batteriesOf(inverterId);
  if (blocks.length === 0) return null;
  const parts = blocks.map((b) => ({ reading: polls.get(b.config.id)?.readings[0], capacity: b.capacityWh }));
  if (parts.some((p) => !p.reading || p.reading.values.power_W === undefined)) return null;
  const useCapacity = parts.every((p) => p.capacity !== undefined && p.capacity > 0);
  const weight = (p: (typeof parts)[number]) => (useCapacity ? p.capacity! : 1);
  const weighted = (key: 'soc' | 'soh'): number | undefined => {
    let sum = 0;
    let w = 0;
    for (const p of parts) {
      const v = p.reading!.values[key];
      if (v === undefined) return undefined;
      sum += v * weight(p);
      w += weight(p);
    }
    return w > 0 ? sum / w : undefined;
  };
  const soc = weighted('soc');
  const soh = weighted('soh');
  const summed = (key: 'inWh' | 'outWh'): number | undefined =>
    parts.every((p) => p.reading!.counters?.[key] !== undefined)
      ? parts.reduce((s, p) => s + p.reading!.counters![key]!, 0)
      : undefined;
  const inWh = summed('inWh');
  const outWh = summed('outWh');
  return {
    streamId: streamIds.batteryAggregate(inverterId),
    ts: Math.max(...parts.map((p) => p.reading!.ts)),
    values: {
      power_W: parts.reduce((s, p) => s + p.reading!.values.power_W!, 0),
      ...(soc !== undefined ? { soc } : {}),
      ...(soh !== undefined ? { soh } : {}),
    },
    ...(inWh !== undefined || outWh !== undefined
      ? { counters: { ...(inWh !== undefined ? { inWh } : {}), ...(outWh !== undefined ? { outWh } : {}) } }
      : {}),
  };
}

/**
 * The house consumption of one poll cycle on a site without a consumption meter (issue 7,
 * `__CONSUMPTION_METER_DERIVED`): what the grid connection brings in plus what the inverters
 * deliver on the AC side. With docs/design.md's signs (grid + importing, inverter AC − delivering)
 * that is house = grid_W − Σ inverter_AC_W; the inverters' AC side already carries PV and
 * battery after conversion losses. Built only when the grid meter and every inverter answered
 * in this cycle, so a silent device never shows up as a jump in consumption. Its energy
 * counters are integrated from this power by the bucketer, like any stream without counters.
 */
export function derivedConsumption(site: Site, polls: ReadonlyMap<string, DevicePoll>): Reading | null {
  const sources = site.derivedConsumptionSources();
  if (!sources) return null;
  const find = (deviceId: string, streamId: string) =>
    polls.get(deviceId)?.readings.find((r) => r.streamId === streamId);
  const grid = find(sources.gridMeter.config.id, streamIds.gridMeter(sources.gridMeter.config.id));
  const inverters = sources.inverters.map((inv) => find(inv.config.id, streamIds.inverter(inv.config.id)));
  if (grid?.values.power_W === undefined || inverters.some((r) => r?.values.power_AC_W === undefined)) return null;
  const acW = inverters.reduce((s, r) => s + r!.values.power_AC_W!, 0);
  return {
    streamId: streamIds.consumptionDerived(site.id),
    ts: Math.max(grid.ts, ...inverters.map((r) => r!.ts)),
    // measurement noise can push the difference a little below zero while the house draws nothing
    values: { power_W: Math.max(0, grid.values.power_W - acW) },
  };
}
