import { STATUS_CODES } from './node-http.js';

/**
 * Named API errors with their HTTP status. The HTTP layer turns them into fastify's error body
 * (`{statusCode, error, code, message}`, docs/design.md); modules below the edge throw them so the
 * message that reaches a partner is written where the fault is understood.
 */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    /** seconds after which the same request may succeed (a 429's Retry-After) */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const ErrorCodes = {
  INVALID_PARAMETER: { status: 400, code: 'INVALID_PARAMETER' },
  MISSING_PARAMETER: { status: 400, code: 'MISSING_PARAMETER' },
  INVALID_INTERVAL: { status: 400, code: 'INVALID_INTERVAL' },
  INVALID_RESOLUTION: { status: 400, code: 'INVALID_RESOLUTION' },
  INVALID_INCLUDE: { status: 400, code: 'INVALID_INCLUDE' },
  INTERVAL_TOO_LONG: { status: 400, code: 'INTERVAL_TOO_LONG' },
  SITE_NOT_FOUND: { status: 404, code: 'SITE_NOT_FOUND' },
  DEVICE_NOT_FOUND: { status: 404, code: 'DEVICE_NOT_FOUND' },
  ROUTE_NOT_FOUND: { status: 404, code: 'ROUTE_NOT_FOUND' },
  METHOD_NOT_ALLOWED: { status: 405, code: 'METHOD_NOT_ALLOWED' },
  // dynamic tariffs and savings
  INVALID_BODY: { status: 400, code: 'INVALID_BODY' },
  // a request body sent in a trickle of tiny chunks (docs/security.md "HTTP limits")
  BODY_TOO_FRAGMENTED: { status: 400, code: 'BODY_TOO_FRAGMENTED' },
  // a request body over its endpoint's limit; the connection is closed after the answer
  BODY_TOO_LARGE: { status: 413, code: 'BODY_TOO_LARGE' },
  OVERLAPPING_VALUES: { status: 400, code: 'OVERLAPPING_VALUES' },
  INVALID_NEXT_TOKEN: { status: 400, code: 'INVALID_NEXT_TOKEN' },
  TARIFF_NOT_FOUND: { status: 404, code: 'TARIFF_NOT_FOUND' },
  SITE_TARIFF_UNAVAILABLE: { status: 409, code: 'SITE_TARIFF_UNAVAILABLE' },
  // a client's tariffs or a tariff's values at their limit (limits.dynamicTariffs)
  TARIFF_LIMIT_REACHED: { status: 409, code: 'TARIFF_LIMIT_REACHED' },
  // a client's values per 24 hours spent; Retry-After says when enough are free again
  TARIFF_QUOTA_EXCEEDED: { status: 429, code: 'TARIFF_QUOTA_EXCEEDED' },
  // a client's WebSockets at limits.http.maxWebSocketsPerClient
  WEBSOCKET_LIMIT_REACHED: { status: 429, code: 'WEBSOCKET_LIMIT_REACHED' },
  // the data disk takes no writes (full, read-only, failing): a write is refused, reads go on
  STORAGE_UNAVAILABLE: { status: 503, code: 'STORAGE_UNAVAILABLE' },
  // battery control (docs/design.md "Control: operation mode and plans")
  CONTROL_DISABLED: { status: 409, code: 'CONTROL_DISABLED' },
  OPTIMISER_UNAVAILABLE: { status: 409, code: 'OPTIMISER_UNAVAILABLE' },
  NOT_A_STORAGE: { status: 400, code: 'NOT_A_STORAGE' },
  PLAN_NOT_FOUND: { status: 404, code: 'PLAN_NOT_FOUND' },
  PLAN_CHANGED: { status: 412, code: 'PLAN_CHANGED' },
  SLOT_INVALID: { status: 400, code: 'SLOT_INVALID' },
  SLOT_NOT_ALIGNED: { status: 400, code: 'SLOT_NOT_ALIGNED' },
  SLOTS_OVERLAP: { status: 400, code: 'SLOTS_OVERLAP' },
  SLOT_TOO_FAR: { status: 400, code: 'SLOT_TOO_FAR' },
  SLOT_IN_PAST: { status: 400, code: 'SLOT_IN_PAST' },
  POWER_REQUIRED: { status: 400, code: 'POWER_REQUIRED' },
  SLOT_MODE_UNSUPPORTED: { status: 400, code: 'SLOT_MODE_UNSUPPORTED' },
  RESERVE_INVALID: { status: 400, code: 'RESERVE_INVALID' },
  RESERVE_OUT_OF_RANGE: { status: 400, code: 'RESERVE_OUT_OF_RANGE' },
  // site limits (docs/limits.md): a schedule slot without any limit; an If-Match on a changed schedule
  LIMIT_REQUIRED: { status: 400, code: 'LIMIT_REQUIRED' },
  LIMITS_CHANGED: { status: 412, code: 'LIMITS_CHANGED' },
  LIMITS_NOT_FOUND: { status: 404, code: 'LIMITS_NOT_FOUND' },
  // a partner writing the site's limits must be granted every inverter of the site
  LIMITS_NOT_GRANTED: { status: 403, code: 'LIMITS_NOT_GRANTED' },
  INTERNAL: { status: 500, code: 'INTERNAL_ERROR' },
  // the port full, or too many answers not yet read from one address (limits.http); Retry-After: 1
  SERVER_BUSY: { status: 503, code: 'SERVER_BUSY' },
} as const;
export type ErrorName = keyof typeof ErrorCodes;

export function apiError(name: ErrorName, message: string, retryAfter?: number): ApiError {
  const e = ErrorCodes[name];
  return new ApiError(e.status, e.code, message, retryAfter);
}

/** The body of every 4xx/5xx the gateway answers, over HTTP and on a refused WebSocket upgrade alike. */
export interface ErrorBody {
  statusCode: number;
  error: string;
  code: string;
  message: string;
}

export function errorBody(statusCode: number, code: string, message: string): ErrorBody {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', code, message };
}
