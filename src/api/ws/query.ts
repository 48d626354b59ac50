import { INCLUDE_GROUPS, type IncludeGroup } from '../../core/channels.js';
import { ApiError, apiError } from '../../core/errors.js';
import { DEVICE_CLASSES, type DeviceClass } from '../../telemetry/messages.js';
import { singleValue } from '../lenient-query.js';

export const STREAMS = ['telemetry-realtime', 'grid-events'] as const;
export type WsStream = (typeof STREAMS)[number];

export interface WsSubscription {
  streams: Set<WsStream>;
  telemetryDevices: DeviceClass[];
  telemetryInclude: IncludeGroup[];
}

/** Spellings the spec also uses for a value (docs/design.md "lenient input"): its table once says `grid-event`. */
const ALIASES: Record<string, string> = { 'grid-event': 'grid-events' };

/** Comma list of known words: every word must be known, repeats count once, the list may not be empty. */
function list<T extends string>(
  name: string,
  raw: string | undefined,
  allowed: readonly T[],
  fallback: T[] | null,
): T[] {
  if (raw === undefined) {
    if (fallback) return fallback;
    throw apiError(
      'MISSING_PARAMETER',
      `query parameter '${name}' is required; expected a comma-separated list of ${allowed.join(', ')}`,
    );
  }
  const words = raw.split(',').map((w) => w.trim());
  const out: T[] = [];
  for (const raw of words) {
    const w = ALIASES[raw] ?? raw;
    if (!(allowed as readonly string[]).includes(w)) {
      throw apiError(
        'INVALID_PARAMETER',
        `query parameter '${name}': '${raw.slice(0, 40)}' is not one of ${allowed.join(', ')}`,
      );
    }
    if (!out.includes(w as T)) out.push(w as T);
  }
  return out;
}

/**
 * The WebSocket connection's query (docs/api.md "Connection"), checked before the upgrade so
 * a bad request is an HTTP 400 with the error body rather than a socket that closes later.
 * `telemetryInclude` defaults to `default`, as the telemetry endpoint's `include` does. As on
 * HTTP (lenient-query.ts), a repeated list parameter is one list and unknown parameters are ignored.
 */
export function parseWsQuery(search: URLSearchParams): WsSubscription {
  const get = (k: string) => {
    const all = search.getAll(k);
    return all.length === 0 ? undefined : singleValue(k, all, true);
  };
  return {
    streams: new Set(list('streams', get('streams'), STREAMS, null)),
    telemetryDevices: list('telemetryDevices', get('telemetryDevices'), DEVICE_CLASSES, ['partner']),
    telemetryInclude: list('telemetryInclude', get('telemetryInclude'), INCLUDE_GROUPS, ['default']),
  };
}

export { ApiError };
