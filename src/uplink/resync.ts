import type { Database } from 'better-sqlite3';
import { ApiError } from '../core/errors.js';
import type { ClosedBucket } from '../core/events.js';
import { streamIds } from '../core/streams.js';
import type { Site } from '../site/site.js';
import { announcedGridEvents } from '../store/grid-events.js';
import { type OutboxMessage, outboxStats } from '../store/outbox.js';
import { storageRefusal } from '../store/storage-faults.js';
import { BUCKET_MS } from '../telemetry/align.js';
import { parseInterval } from '../telemetry/interval.js';
import { queryTelemetry } from '../telemetry/query.js';
import { REQUEST_ID_RULE, requestIdOf } from './commands.js';
import { gridEventBody, type PayloadContext, telemetryBodies, UPLINK_INCLUDE } from './payloads.js';

/**
 * `{prefix}/cmd/resync`: a cloud service asks for a time range of buckets and grid events again,
 * e.g. after losing its own copy. Body: {"requestId": "...", "interval": "<ISO 8601 start/end>"}.
 */
export interface ResyncRequest {
  requestId: string;
  /** the interval as asked for, epoch ms (buckets: those starting in it) */
  start: number;
  end: number;
  interval: string;
}

export class ResyncError extends Error {
  constructor(
    readonly code: 'INVALID_PAYLOAD' | 'INVALID_REQUEST_ID' | 'INVALID_INTERVAL' | 'INTERVAL_TOO_LONG' | 'OUTBOX_FULL',
    message: string,
    readonly requestId: string | null = null,
  ) {
    super(message);
    this.name = 'ResyncError';
  }
}

export const MAX_COMMAND_BYTES = 4096;
/** One request covers at most this; a longer range is asked for in several requests. */
export const MAX_RESYNC_DAYS = 31;

export function parseResync(payload: Buffer): ResyncRequest {
  if (payload.length > MAX_COMMAND_BYTES)
    throw new ResyncError(
      'INVALID_PAYLOAD',
      `the command is ${payload.length} bytes; at most ${MAX_COMMAND_BYTES} are accepted`,
    );
  let body: unknown;
  try {
    body = JSON.parse(payload.toString('utf8'));
  } catch {
    throw new ResyncError(
      'INVALID_PAYLOAD',
      'the command is not JSON; send {"requestId":"...","interval":"<start>/<end>"}',
    );
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ResyncError(
      'INVALID_PAYLOAD',
      'the command must be a JSON object {"requestId":"...","interval":"<start>/<end>"}',
    );
  }
  const b = body as Record<string, unknown>;
  const rid = requestIdOf(b);
  if (rid === null) throw new ResyncError('INVALID_REQUEST_ID', REQUEST_ID_RULE);
  const unknown = Object.keys(b).filter((k) => k !== 'requestId' && k !== 'interval');
  if (unknown.length > 0)
    throw new ResyncError(
      'INVALID_PAYLOAD',
      `unknown field '${unknown[0]!.slice(0, 40)}'; expected requestId and interval`,
      rid,
    );
  if (typeof b.interval !== 'string')
    throw new ResyncError(
      'INVALID_INTERVAL',
      'interval must be an ISO 8601 interval string in UTC, e.g. 2026-11-01T00:00:00Z/2026-11-02T00:00:00Z',
      rid,
    );
  let range: { start: number; end: number };
  try {
    range = parseInterval(b.interval.slice(0, 200));
  } catch (err) {
    if (err instanceof ApiError) throw new ResyncError('INVALID_INTERVAL', err.message, rid);
    throw err;
  }
  if (range.end - range.start > MAX_RESYNC_DAYS * 86_400_000) {
    throw new ResyncError(
      'INTERVAL_TOO_LONG',
      `the interval covers more than ${MAX_RESYNC_DAYS} days; ask for it in several requests`,
      rid,
    );
  }
  return { requestId: rid, start: range.start, end: range.end, interval: b.interval };
}

/**
 * What a resync sends again, marked with its request id, oldest `time` first: every stored bucket
 * that starts in the request's range (telemetry messages) and every grid event stamped in it
 * (grid-events messages). A consumer that lost either in a hole gets it back the same way.
 */
export function resyncBodies(
  db: Database,
  site: Site,
  ctx: PayloadContext,
  req: ResyncRequest,
): { messages: OutboxMessage[]; buckets: number; gridEvents: number } {
  // whole buckets: every bucket that starts inside the range
  const bucketsFrom = Math.ceil(req.start / BUCKET_MS) * BUCKET_MS;
  const byStart = new Map<number, ClosedBucket[]>();
  let buckets = 0;
  for (const s of site.streams()) {
    const entries = queryTelemetry(db, {
      streamId: s.id,
      deviceId: s.id,
      deviceKind: s.deviceKind,
      start: bucketsFrom,
      end: req.end,
      resolution: 'PT15M',
      include: new Set(UPLINK_INCLUDE),
      channels: s.channels,
      timezone: site.config.site.timezone,
      // the payload builder applies api.socScale once
      socScale: 'percent',
    });
    for (const e of entries) {
      const { deviceKind: _k, kind: _kind, deviceId: _d, interval, ...values } = e;
      const start = Date.parse(interval.slice(0, interval.indexOf('/')));
      const bucket = {
        streamId: s.id,
        start,
        end: start + BUCKET_MS,
        values: values as Record<string, number | string>,
      };
      const group = byStart.get(start);
      if (group) group.push(bucket);
      else byStart.set(start, [bucket]);
      buckets++;
    }
  }
  const timed: { time: number; message: OutboxMessage }[] = [];
  for (const [start, group] of byStart)
    for (const message of telemetryBodies(ctx, group, req.requestId)) timed.push({ time: start, message });
  const events = announcedGridEvents(db, req.start, req.end);
  for (const e of events) {
    // the stream id the event went out under (grid/feature.ts)
    const event = { ...e, streamId: streamIds.gridMeter(e.deviceId) };
    timed.push({ time: e.timestamp, message: gridEventBody(ctx, event, req.requestId) });
  }
  timed.sort((a, b) => a.time - b.time);
  return { messages: timed.map((t) => t.message), buckets, gridEvents: events.length };
}

export type ResyncAnswer =
  | {
      requestId: string;
      status: 'accepted';
      interval: string;
      buckets: number;
      gridEvents: number;
      messages: number;
      firstSeq: number | null;
      lastSeq: number | null;
    }
  | { requestId: string | null; status: 'error'; code: string; message: string };

export interface ResyncTarget {
  db: Database;
  site: Site;
  ctx: PayloadContext;
  /** the outbox's bound (outbox.maxMegabytes) */
  outboxMaxBytes: number;
  /** appends the messages to the outbox in one transaction, answering their seqs */
  enqueue(messages: OutboxMessage[]): number[];
}

/**
 * The answer to one cmd/resync payload; when accepted, its messages are in the outbox. A bad
 * request and a data disk that takes no writes are answered by name (the outbox is on that
 * disk: STORAGE_UNAVAILABLE, as HTTP's 503); any other fault is thrown.
 */
export function answerResync(t: ResyncTarget, payload: Buffer): ResyncAnswer {
  let requestId: string | null = null;
  try {
    const req = parseResync(payload);
    requestId = req.requestId;
    const { messages, buckets, gridEvents } = resyncBodies(t.db, t.site, t.ctx, req);
    const bytes = messages.reduce((n, m) => n + Buffer.byteLength(m.body), 0);
    if (outboxStats(t.db).bytes + bytes > t.outboxMaxBytes)
      throw new ResyncError(
        'OUTBOX_FULL',
        `the ${messages.length} messages (${bytes} bytes) do not fit in the outbox now; ask for a shorter interval or later`,
        req.requestId,
      );
    const seqs = messages.length > 0 ? t.enqueue(messages) : [];
    return {
      requestId: req.requestId,
      status: 'accepted',
      interval: req.interval,
      buckets,
      gridEvents,
      messages: messages.length,
      firstSeq: seqs[0] ?? null,
      lastSeq: seqs.at(-1) ?? null,
    };
  } catch (err) {
    const refused = storageRefusal(err);
    if (refused) return { requestId, status: 'error', code: refused.code, message: refused.message };
    if (err instanceof ResyncError)
      return { requestId: err.requestId, status: 'error', code: err.code, message: err.message };
    throw err;
  }
}
