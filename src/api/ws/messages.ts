import { CHANNEL_GROUP, type ChannelId, type IncludeGroup } from '../../core/channels.js';
import type { ClosedBucket, GridEvent } from '../../core/events.js';
import type { StreamDef } from '../../telemetry/stream.js';
import { formatInterval } from '../../telemetry/interval.js';
import { percentToFraction } from '../../telemetry/round.js';
import type { DeviceClass } from './query.js';

/**
 * Serialised pieces of a push, built once per closed bucket and include set, so pushing one
 * bucket to hundreds of clients costs string joins rather than hundreds of JSON.stringify calls.
 */
export class BucketFragments {
  private readonly cache = new Map<string, Map<string, string>>();

  constructor(
    private readonly buckets: ClosedBucket[],
    private readonly streams: (id: string) => StreamDef | undefined,
    private readonly socScale: 'percent' | 'fraction',
  ) {}

  /** streamId → serialised entry, for this include set */
  entries(include: readonly IncludeGroup[]): Map<string, string> {
    const key = [...include].sort().join(',');
    let m = this.cache.get(key);
    if (m) return m;
    m = new Map();
    for (const b of this.buckets) {
      const def = this.streams(b.streamId);
      if (!def) continue;
      const entry: Record<string, string | number> = { deviceKind: def.deviceKind, kind: def.deviceKind, deviceId: def.id, interval: formatInterval(b.start, b.end) };
      let any = false;
      for (const [ch, v] of Object.entries(b.values)) {
        if (!include.includes(CHANNEL_GROUP[ch as ChannelId])) continue;
        entry[ch] = ch === 'soc' && this.socScale === 'fraction' && typeof v === 'number' ? percentToFraction(v) : v;
        any = true;
      }
      if (any) m.set(b.streamId, JSON.stringify(entry));
    }
    this.cache.set(key, m);
    return m;
  }
}

/** telemetry-realtime messages of at most `max` entries each (docs/api.md "Stream telemetry-realtime", "Limits"). */
export function telemetryMessages(entries: string[], cls: DeviceClass, interval: string, include: readonly IncludeGroup[], max: number): string[] {
  const out: string[] = [];
  const tail = `,"telemetryDevices":${JSON.stringify(cls)},"interval":${JSON.stringify(interval)},"telemetryInclude":${JSON.stringify(include)}}`;
  for (let i = 0; i < entries.length; i += max) {
    out.push(`{"stream":"telemetry-realtime","entries":[${entries.slice(i, i + max).join(',')}]${tail}`);
  }
  return out;
}

/** `deviceId` is the stream id, so a client finds the meter in the topology and its `state` in telemetry. */
export function gridEventMessage(e: GridEvent): string {
  return JSON.stringify({ stream: 'grid-events', deviceId: e.streamId, timestamp: new Date(e.timestamp).toISOString(), deviceKind: 'meter', state: e.state });
}
