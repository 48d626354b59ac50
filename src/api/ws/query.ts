import { INCLUDE_GROUPS, type IncludeGroup } from '../../core/channels.js';
import { ApiError, apiError } from '../../core/errors.js';

export const STREAMS = ['telemetry-realtime', 'grid-events'] as const;
export type WsStream = (typeof STREAMS)[number];
export const DEVICE_CLASSES = ['partner', 'customer'] as const;
export type DeviceClass = (typeof DEVICE_CLASSES)[number];

export interface WsSubscription {
  streams: Set<WsStream>;
  telemetryDevices: DeviceClass[];
  telemetryInclude: IncludeGroup[];
}

/** Comma list of known words: every word must be known, none may repeat, the list may not be empty. */
function list<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T[] | null): T[] {
  if (raw === undefined) {
    if (fallback) return fallback;
    throw apiError('MISSING_PARAMETER', `query parameter '${name}' is required; expected a comma-separated list of ${allowed.join(', ')}`);
  }
  const words = raw.split(',').map((w) => w.trim());
  const out: T[] = [];
  for (const w of words) {
    if (!(allowed as readonly string[]).includes(w)) {
      throw apiError('INVALID_PARAMETER', `query parameter '${name}': '${w.slice(0, 40)}' is not one of ${allowed.join(', ')}`);
    }
    if (!out.includes(w as T)) out.push(w as T);
  }
  return out;
}

/**
 * The WebSocket connection's query (spec "Events / Connection"), checked before the upgrade so
 * a bad request is an HTTP 400 with the error body rather than a socket that closes later.
 * `telemetryInclude` defaults to `default`, as the telemetry endpoint's `include` does.
 */
export function parseWsQuery(search: URLSearchParams): WsSubscription {
  for (const key of search.keys()) {
    if (search.getAll(key).length > 1) throw apiError('INVALID_PARAMETER', `query parameter '${key}' is given more than once`);
    if (!['streams', 'telemetryDevices', 'telemetryInclude'].includes(key)) {
      throw apiError('INVALID_PARAMETER', `unknown query parameter '${key.slice(0, 40)}'; expected streams, telemetryDevices, telemetryInclude`);
    }
  }
  const get = (k: string) => search.get(k) ?? undefined;
  return {
    streams: new Set(list('streams', get('streams'), STREAMS, null)),
    telemetryDevices: list('telemetryDevices', get('telemetryDevices'), DEVICE_CLASSES, ['partner']),
    telemetryInclude: list('telemetryInclude', get('telemetryInclude'), INCLUDE_GROUPS, ['default']),
  };
}

export { ApiError };
