import type { ChannelId, IncludeGroup, SocScale } from '../core/channels.js';
import type { ClosedBucket } from '../core/events.js';
import type { StreamDef } from '../core/streams.js';
import { type EntryShape, entryShape, toEntry } from './entry.js';
import { formatInterval } from './interval.js';

/** The classes of devices a telemetry-realtime message is for (spec: `telemetryDevices`). */
export const DEVICE_CLASSES = ['partner', 'customer'] as const;
export type DeviceClass = (typeof DEVICE_CLASSES)[number];

/**
 * Serialised entries of closed buckets, built once per closed bucket and include set, so
 * pushing one bucket to hundreds of WebSocket clients, or to the uplink, costs string joins
 * rather than hundreds of JSON.stringify calls.
 */
export class BucketFragments {
  private readonly cache = new Map<string, Map<string, string>>();

  constructor(
    private readonly buckets: readonly ClosedBucket[],
    private readonly streams: (id: string) => StreamDef | undefined,
    private readonly socScale: SocScale,
  ) {}

  /** streamId → serialised entry, for this include set */
  entries(include: readonly IncludeGroup[]): Map<string, string> {
    const key = [...include].sort().join(',');
    let m = this.cache.get(key);
    if (m) return m;
    m = new Map();
    const groups = new Set(include);
    // buckets of streams of one kind carry the same channels: one shape each
    const shapes = new Map<string, EntryShape>();
    for (const b of this.buckets) {
      const def = this.streams(b.streamId);
      if (!def) continue;
      // the bucket's own channel order, as it was written
      const channels = Object.keys(b.values) as ChannelId[];
      const shapeKey = channels.join();
      let shape = shapes.get(shapeKey);
      if (!shape) shapes.set(shapeKey, (shape = entryShape(channels, groups, this.socScale)));
      const entry = toEntry(def.deviceKind, def.id, formatInterval(b.start, b.end), shape, b.values);
      if (entry) m.set(b.streamId, JSON.stringify(entry));
    }
    this.cache.set(key, m);
    return m;
  }
}

/** telemetry-realtime messages of at most `max` entries each (docs/api.md "Stream telemetry-realtime", "Limits"). */
export function telemetryMessages(
  entries: string[],
  cls: DeviceClass,
  interval: string,
  include: readonly IncludeGroup[],
  max: number,
): string[] {
  const out: string[] = [];
  const tail =
    `,"telemetryDevices":${JSON.stringify(cls)},"interval":${JSON.stringify(interval)},` +
    `"telemetryInclude":${JSON.stringify(include)}}`;
  for (let i = 0; i < entries.length; i += max) {
    out.push(`{"stream":"telemetry-realtime","entries":[${entries.slice(i, i + max).join(',')}]${tail}`);
  }
  return out;
}
