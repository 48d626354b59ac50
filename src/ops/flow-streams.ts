/**
 * The streams that make up the site's power flow, by their place in it (StreamDef.role): what the
 * status page's flow diagram and its history charts add up. Kept in one place so both agree on
 * every site shape: several inverters (their PV and battery aggregates summed), battery blocks
 * without an inverter (each block counted alone, there is no aggregate), no grid meter (no grid
 * stream, and no derived house stream either).
 */
import type { Site } from '../site/site.js';

export interface FlowStreams {
  pv: string[];
  battery: string[];
  grid: string[];
  house: string[];
}

export function flowStreams(site: Site): FlowStreams {
  const all = site.streams();
  const ids = (role: string) => all.filter((s) => s.role === role).map((s) => s.id);
  const aggregates = all.filter((s) => s.role === 'battery');
  // a block on an inverter is in that inverter's aggregate; one that is not counts alone
  const inAggregate = new Set(aggregates.flatMap((a) => site.batteriesOf(a.deviceId).map((b) => b.config.id)));
  const blocks = all.filter((s) => s.role === 'battery_block' && !inAggregate.has(s.deviceId));
  return {
    pv: ids('pv'),
    battery: [...aggregates, ...blocks].map((s) => s.id),
    grid: ids('grid'),
    house: ids('house'),
  };
}
