import type { IncludeGroup, SocScale } from '../core/channels.js';
import type { ClosedBucket, DeviceHealthEvent, GridEvent } from '../core/events.js';
import type { StreamDef } from '../core/streams.js';
import { gridEventMessage } from '../grid/message.js';
import type { TopoNode } from '../site/topology.js';
import type { OutboxMessage } from '../store/outbox.js';
import { formatInstant, formatInterval } from '../telemetry/interval.js';
import { BucketFragments, telemetryMessages } from '../telemetry/messages.js';
import { PAYLOAD_VERSION, TOPIC } from './topics.js';

/**
 * Message bodies of the uplink. Telemetry and grid events are the WebSocket's serialisations
 * (src/telemetry/messages.ts, src/grid/message.ts) with the uplink's envelope fields in front: `v`, `time`, `siteId`,
 * and `seq`, which the outbox adds on the way out (store/outbox.ts withSeq).
 *
 * The cloud operates the site, so every device goes out as one class, `partner`, with both
 * field groups (`default` and `energy`).
 */
export const UPLINK_INCLUDE: readonly IncludeGroup[] = ['default', 'energy'];
export const UPLINK_CLASS = 'partner';

export interface PayloadContext {
  siteId: string;
  stream: (id: string) => StreamDef | undefined;
  socScale: SocScale;
}

/** The context of a site's messages: its id, its streams looked up as they are then, the soc scale. */
export function payloadContext(
  site: { readonly id: string; stream(id: string): StreamDef | undefined },
  socScale: SocScale,
): PayloadContext {
  return { siteId: site.id, stream: (id) => site.stream(id), socScale };
}

function envelope(ctx: PayloadContext, time: number, extra = ''): string {
  return `{"v":${PAYLOAD_VERSION},"time":${JSON.stringify(formatInstant(time))},"siteId":${JSON.stringify(ctx.siteId)}${extra}`;
}

/** The envelope's extra field on a republication answering that resync request id. */
const resyncField = (resync: string | undefined): string =>
  resync === undefined ? '' : `,"resync":${JSON.stringify(resync)}`;

/** `{...}` → its fields without the braces, to append after an envelope. */
const inner = (json: string): string => json.slice(1, -1);

/** Buckets sorted by start, a period at a time: one telemetry message each. */
export function* byStart(buckets: readonly ClosedBucket[]): Generator<readonly ClosedBucket[]> {
  for (let i = 0; i < buckets.length; ) {
    const start = buckets[i]!.start;
    let j = i;
    while (j < buckets.length && buckets[j]!.start === start) j++;
    yield buckets.slice(i, j);
    i = j;
  }
}

const entriesOf = (ctx: PayloadContext, group: readonly ClosedBucket[]) => [
  ...new BucketFragments(group, ctx.stream, ctx.socScale).entries(UPLINK_INCLUDE).values(),
];

/** Whether a period's buckets make a telemetry message (none when no stream of it has an entry). */
export const makesTelemetry = (ctx: PayloadContext, group: readonly ClosedBucket[]): boolean =>
  entriesOf(ctx, group).length > 0;

/**
 * One telemetry message per bucket period (buckets sorted by start), every stream in it;
 * `resync` marks a republication answering that request id.
 */
export function telemetryBodies(
  ctx: PayloadContext,
  buckets: readonly ClosedBucket[],
  resync?: string,
): OutboxMessage[] {
  const out: OutboxMessage[] = [];
  const extra = resyncField(resync);
  for (const group of byStart(buckets)) {
    const entries = entriesOf(ctx, group);
    if (entries.length === 0) continue;
    const start = group[0]!.start;
    const [msg] = telemetryMessages(
      entries,
      UPLINK_CLASS,
      formatInterval(start, group[0]!.end),
      UPLINK_INCLUDE,
      entries.length,
    );
    out.push({ topic: TOPIC.telemetry, body: `${envelope(ctx, start, extra)},${inner(msg!)}}`, retain: false });
  }
  return out;
}

/** `resync` marks a republication answering that request id, as on telemetry. */
export function gridEventBody(ctx: PayloadContext, e: GridEvent, resync?: string): OutboxMessage {
  return {
    topic: TOPIC.gridEvents,
    body: `${envelope(ctx, e.timestamp, resyncField(resync))},${inner(gridEventMessage(e))}}`,
    retain: false,
  };
}

/** Retained: the site's topology, compact (the API's default) and expanded. */
export function topologyBody(ctx: PayloadContext, time: number, compact: TopoNode, expanded: TopoNode): OutboxMessage {
  return {
    topic: TOPIC.topology,
    body: `${envelope(ctx, time)},"topology":${JSON.stringify(compact)},"expandedTopology":${JSON.stringify(expanded)}}`,
    retain: true,
  };
}

/** Retained, one topic per device: whether the gateway reaches it. */
export function availabilityBody(ctx: PayloadContext, time: number, h: DeviceHealthEvent): OutboxMessage {
  const fields = {
    deviceId: h.deviceId,
    online: h.online,
    lastSeen: h.lastSeen === null ? null : formatInstant(h.lastSeen),
    ...(h.error !== undefined ? { error: h.error } : {}),
  };
  return {
    topic: TOPIC.availability(h.deviceId),
    body: `${envelope(ctx, time)},${inner(JSON.stringify(fields))}}`,
    retain: true,
  };
}
