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
  /** per name, what precedes its value in an entry's JSON: `,"power_W":` */
  keys: readonly string[];
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
  return {
    names,
    keys: names.map((c) => `,${JSON.stringify(c)}:`),
    fractionAt: socScale === 'fraction' ? names.indexOf('soc') : -1,
  };
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

/**
 * What every entry of one stream begins with in JSON, up to its interval's text:
 * `{"deviceKind":"pv","kind":"pv","deviceId":"pv1","interval":"`.
 */
export function entryHead(kind: DeviceKind, deviceId: string): string {
  const k = JSON.stringify(kind);
  return `{"deviceKind":${k},"kind":${k},"deviceId":${JSON.stringify(deviceId)},"interval":"`;
}

/**
 * The JSON of toEntry's channel fields (`,"power_W":12.5,"soc":40`), written from a stored row
 * as `JSON.stringify` writes them, byte for byte; '' where toEntry gives undefined. So
 * `entryHead(…) + interval + '"' + valuesText(…) + '}'` is `JSON.stringify(toEntry(…))`
 * (test/telemetry/entry-text.test.ts) without the entry object: a day not asked before is 96 of
 * them, and under the unit's --lite-mode every object and its keys are interpreted work
 * (bench/README.md "A day not asked before").
 */
export function valuesText(shape: EntryShape, row: readonly (number | string | null)[], first: number): string {
  const { keys, fractionAt } = shape;
  let s = '';
  for (let j = 0; j < keys.length; j++) {
    let v = row[first + j];
    if (v === null || v === undefined) continue;
    if (j === fractionAt) v = percentToFraction(v as number);
    // a finite number's text is JSON's; JSON writes NaN and ±Infinity as null, strings quoted
    s += keys[j] + (typeof v === 'number' && v - v === 0 ? `${v}` : JSON.stringify(v));
  }
  return s;
}
