import { TOPIC } from '../uplink/topics.js';
import type { Incoming, TelemetryRow } from './store.js';

/** The topic levels after a site's prefix that carry a seq (docs/asyncapi.yaml), from the uplink's own table. */
export const SEQ_SUFFIXES = [TOPIC.telemetry, TOPIC.gridEvents, TOPIC.topology, TOPIC.availability('+')];
// the table's names are letters, '-' and '/': only the '+' wildcard needs a regex of its own
const SEQ_TOPICS = new RegExp(`/(${SEQ_SUFFIXES.map((s) => s.replace('+', '[^/]+')).join('|')})$`);
const RESPONSE = new RegExp(`/${TOPIC.resyncResponse}$`);
const STATUS = new RegExp(`/${TOPIC.status}$`);

export type Parsed =
  | { kind: 'data'; siteId: string; prefix: string; seq: number; time: number; msg: Incoming }
  | {
      kind: 'response';
      prefix: string;
      requestId: string | null;
      status: string;
      firstSeq: number | null;
      lastSeq: number | null;
      code?: string;
    }
  | { kind: 'status'; siteId: string; prefix: string; online: boolean; lastSeq: number | null; time: number }
  | { kind: 'ignored'; reason: string };

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);

/**
 * One uplink message as the consumer uses it. What it cannot use is `ignored` with a reason
 * (counted, logged once per reason), never thrown: a consumer keeps going whatever a topic holds.
 */
export function parseMessage(topic: string, payload: Buffer): Parsed {
  const data = SEQ_TOPICS.exec(topic);
  const response = data ? null : RESPONSE.exec(topic);
  const status = data || response ? null : STATUS.exec(topic);
  if (!data && !response && !status) return { kind: 'ignored', reason: 'not a topic the consumer reads' };
  let body: unknown;
  try {
    body = JSON.parse(payload.toString('utf8'));
  } catch {
    return { kind: 'ignored', reason: 'payload is not JSON' };
  }
  if (!isObject(body)) return { kind: 'ignored', reason: 'payload is not a JSON object' };
  if (status) {
    if (typeof body.siteId !== 'string' || body.siteId.length === 0) return { kind: 'ignored', reason: 'no siteId' };
    const last = body.lastSeq;
    const time = typeof body.time === 'string' ? Date.parse(body.time) : NaN;
    return {
      kind: 'status',
      siteId: body.siteId,
      prefix: topic.slice(0, status.index),
      online: body.state === 'online',
      // a last will has neither: it says offline and nothing else
      lastSeq: typeof last === 'number' && Number.isSafeInteger(last) && last > 0 ? last : null,
      time: Number.isFinite(time) ? time : Date.now(),
    };
  }
  if (response) {
    const seqOrNull = (x: unknown) => (typeof x === 'number' ? x : null);
    return {
      kind: 'response',
      prefix: topic.slice(0, response.index),
      requestId: typeof body.requestId === 'string' ? body.requestId : null,
      status: String(body.status),
      firstSeq: seqOrNull(body.firstSeq),
      lastSeq: seqOrNull(body.lastSeq),
      ...(typeof body.code === 'string' ? { code: body.code } : {}),
    };
  }
  const { seq, siteId } = body;
  // the ledger's times bound a hole's resync interval: `written` grows with seq even next to a
  // resync copy, whose `time` is old (docs/mqtt-contract.md "Asking for a hole"); an older
  // gateway sends only `time`
  const stamp = typeof body.written === 'string' ? body.written : body.time;
  const time = typeof stamp === 'string' ? Date.parse(stamp) : NaN;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1)
    return { kind: 'ignored', reason: 'no valid seq' };
  if (typeof siteId !== 'string' || siteId.length === 0) return { kind: 'ignored', reason: 'no siteId' };
  if (!Number.isFinite(time)) return { kind: 'ignored', reason: 'no valid time' };
  const prefix = topic.slice(0, data!.index);
  const suffix = data![1]!;
  let msg: Incoming;
  if (suffix === TOPIC.telemetry) {
    if (!Array.isArray(body.entries)) return { kind: 'ignored', reason: 'telemetry without entries' };
    const entries: TelemetryRow[] = [];
    for (const e of body.entries as unknown[]) {
      if (!isObject(e) || typeof e.deviceId !== 'string' || typeof e.interval !== 'string')
        return { kind: 'ignored', reason: 'telemetry entry without deviceId or interval' };
      const start = Date.parse(e.interval.slice(0, e.interval.indexOf('/')));
      if (!Number.isFinite(start)) return { kind: 'ignored', reason: 'telemetry entry with a bad interval' };
      entries.push({
        deviceId: e.deviceId,
        start,
        interval: e.interval,
        deviceKind: String(e.deviceKind),
        entry: JSON.stringify(e),
      });
    }
    msg = { kind: 'telemetry', entries, resync: typeof body.resync === 'string' ? body.resync : null };
  } else if (suffix === TOPIC.gridEvents) {
    msg = {
      kind: 'grid-event',
      deviceId: String(body.deviceId),
      timestamp: String(body.timestamp),
      state: String(body.state),
    };
  } else {
    msg = { kind: 'state', key: suffix, body: JSON.stringify(body) };
  }
  return { kind: 'data', siteId, prefix, seq, time, msg };
}
