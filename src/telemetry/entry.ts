import {
  CHANNEL_GROUP,
  type ChannelId,
  type ChannelValue,
  type DeviceKind,
  type IncludeGroup,
  percentToFraction,
  type SocScale,
} from '../core/channels.js';

/**
 * A telemetry entry (spec "Telemetry entry"), the one shape the HTTP query, the WebSocket push
 * and the uplink send: the stream, its period, and one field per channel of the channel table
 * (core/channels.ts) that was asked for and has a value.
 */
export type TelemetryEntry = {
  deviceKind: DeviceKind;
  /** the device kind again: the WS sample calls it `kind` (docs/design.md) */
  kind: DeviceKind;
  deviceId: string;
  interval: string;
} & { [C in ChannelId]?: ChannelValue<C> };

/** Which channels entries carry, in the order they are written, and how soc is scaled. */
export interface EntryShape {
  names: readonly ChannelId[];
  /** index into names of soc when it goes out as a fraction, else -1 */
  fractionAt: number;
}

/** The channels of `channels` that `include` asks for, each once, in the order given. */
export function entryShape(
  channels: Iterable<ChannelId>,
  include: ReadonlySet<IncludeGroup>,
  socScale: SocScale,
): EntryShape {
  const names = [...new Set(channels)].filter((c) => include.has(CHANNEL_GROUP[c]));
  return { names, fractionAt: socScale === 'fraction' ? names.indexOf('soc') : -1 };
}

/** Stored values: a row whose `first + j`-th item is `names[j]`'s value, or values by channel id. */
export type EntryValues = readonly (number | string | null)[] | Readonly<Record<string, number | string>>;

/**
 * The entry of `shape`'s channels with their values (null or absent: no value), stored values
 * in spec units as the buckets hold them. Undefined when no channel has a value: a period
 * without any of the asked channels is left out, never sent as an empty entry.
 */
export function toEntry(
  kind: DeviceKind,
  deviceId: string,
  interval: string,
  shape: EntryShape,
  values: EntryValues,
  first = 0,
): TelemetryEntry | undefined {
  const { names, fractionAt } = shape;
  const e: TelemetryEntry = { deviceKind: kind, kind, deviceId, interval };
  const w = e as unknown as Record<string, number | string>;
  const row = Array.isArray(values) ? (values as readonly (number | string | null)[]) : undefined;
  const byName = values as Readonly<Record<string, number | string>>;
  let any = false;
  for (let j = 0; j < names.length; j++) {
    const name = names[j];
    if (name === undefined) continue;
    const v = row ? row[first + j] : byName[name];
    if (v === null || v === undefined) continue;
    w[name] = j === fractionAt ? percentToFraction(v as number) : v;
    any = true;
  }
  return any ? e : undefined;
}
