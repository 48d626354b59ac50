/**
 * What a stream reads now, for the live views outside the Energy Site API (Prometheus metrics,
 * Home Assistant): its newest current reading and its lifetime energy, in the API's units,
 * signs and rounding. One table says which live quantities there are; every live view is built
 * from it, so a quantity cannot be named, converted or rounded differently in two places.
 */
import {
  CHANNEL_BY_ID,
  type ChannelId,
  type GridState,
  type InstantValues,
  LIVE_CHANNEL_TABLE,
  type LiveChannelId,
  POWER_CHANNELS,
  type StatusValue,
} from '../core/channels.js';
import type { StreamDef } from '../core/streams.js';
import { round2 } from './round.js';

export type LiveKind =
  | 'power'
  | 'soc'
  | 'soh'
  | 'grid'
  | 'energy'
  | 'frequency'
  | 'voltage'
  | 'current'
  | 'temperature'
  | 'status';

export interface LiveQuantity {
  /** stable key: the spec channel (power, soc, soh, state), or `energy_in` / `energy_out` (lifetime Wh as magnitudes) */
  key: string;
  kind: LiveKind;
  /** the channel a stream must carry to have this quantity (a live channel: one its device reported) */
  channel: ChannelId | LiveChannelId;
  /** words after the stream's label, e.g. 'Battery' + 'energy in' */
  label: string;
  /** energy only: into the device (the API's increment) or out of it (its decrement) */
  direction?: 'in' | 'out';
  /** a live channel that is for diagnosing (per-phase and DC values): shown, but not up front */
  diagnostic?: boolean;
}

const quantity = (channel: ChannelId, kind: LiveKind, key: string = channel): LiveQuantity => ({
  key,
  kind,
  channel,
  label: CHANNEL_BY_ID[channel].label,
});

export const LIVE_QUANTITIES: readonly LiveQuantity[] = [
  ...POWER_CHANNELS.map((c) => quantity(c, 'power')),
  quantity('soc', 'soc'),
  quantity('soh', 'soh'),
  quantity('state', 'grid'),
  { ...quantity('energy_Wh_increment', 'energy', 'energy_in'), direction: 'in' },
  { ...quantity('energy_Wh_decrement', 'energy', 'energy_out'), direction: 'out' },
  // the live channels: not bucketed, shown while current (docs/design.md "Live channels")
  ...LIVE_CHANNEL_TABLE.map(
    (c): LiveQuantity => ({ key: c.id, kind: c.quantity, channel: c.id, label: c.label, diagnostic: c.diagnostic }),
  ),
];

/** The quantities a stream has (from its channels and the live channels its device reported), in table order. */
export function quantitiesOf(def: StreamDef): LiveQuantity[] {
  const has = (c: string) => (def.channels as string[]).includes(c) || (def.live as string[] | undefined)?.includes(c);
  return LIVE_QUANTITIES.filter((q) => has(q.channel));
}

export interface StreamNow {
  /** the newest reading still current (within 3 poll periods), daemon clock ms; null when there is none */
  ts: number | null;
  /** power W, soc and soh percent rounded as buckets are, the grid state, energy Wh (>= 0, never decreasing), live channels; absent = unknown now */
  values: Partial<Record<string, number | GridState | StatusValue>>;
}

/**
 * `current` is the stream's newest current reading (ops/live.ts), `lifetime` the bucketer's
 * counts (Bucketer.lifetime, spec signs). Power, soc, soh and state are held only while current;
 * the energy counts are lifetime figures and always shown once known.
 */
export function streamNow(
  def: StreamDef,
  current: { ts: number; values: InstantValues } | undefined,
  lifetime: { energyIn: number | null; energyOut: number | null } | undefined,
): StreamNow {
  const values: StreamNow['values'] = {};
  for (const q of quantitiesOf(def)) {
    if (q.kind === 'energy') {
      const wh = q.direction === 'in' ? lifetime?.energyIn : lifetime?.energyOut;
      // the API's decrement is <= 0; a live view shows the magnitude (+ 0 turns -0 into 0)
      if (wh !== null && wh !== undefined) values[q.key] = Math.abs(wh) + 0;
      continue;
    }
    const v = current?.values[q.channel as keyof InstantValues];
    if (q.kind === 'grid' || q.kind === 'status') {
      if (typeof v === 'string') values[q.key] = v;
    } else if (typeof v === 'number' && Number.isFinite(v)) {
      values[q.key] = round2(v);
    }
  }
  return { ts: current?.ts ?? null, values };
}
