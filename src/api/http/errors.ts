import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, apiError, ErrorCodes, errorBody } from '../../core/errors.js';
import { storageRefusal } from '../../store/storage-faults.js';
import { parseInclude, parseInterval, parseResolution } from '../../telemetry/interval.js';
import { namedError } from './body.js';
import { lingerOnClose } from './linger.js';

/** The router's limit on a path parameter (app.ts); the route schemas say the same with maxLength. */
export const MAX_PATH_PARAM = 200;

/** What each query/path parameter accepts, so a 400 can say what would be right. */
const ACCEPTS: Record<string, string> = {
  interval: 'an ISO 8601 interval in UTC: start/end, start/duration or duration/end, e.g. 2026-11-01T00:00:00Z/P1D',
  resolution: 'an ISO 8601 duration: PT15M, PT1H or P1D',
  include: 'a comma-separated list of default and/or energy',
  compact: 'true, false, 1 or 0 (any case)',
};

/** Parameters whose wrong value has a code of its own (docs/api.md "Errors"), whichever check found it. */
const CODES: Record<string, string> = {
  interval: ErrorCodes.INVALID_INTERVAL.code,
  resolution: ErrorCodes.INVALID_RESOLUTION.code,
  include: ErrorCodes.INVALID_INCLUDE.code,
};

/**
 * The handlers' own readers of a parameter, whose messages say what exactly is wrong ("has no UTC
 * offset on its start", "encode + as %2B"): a value the schema refuses is read again by them for
 * the message, so the schema can be as strict as the server without worse messages.
 */
const READERS: Record<string, (value: string, listed?: string[]) => void> = {
  interval: (v) => parseInterval(v),
  include: (v) => parseInclude(v),
  resolution: (v, listed) => {
    if (!listed) return;
    if (v.trim() === '') throw apiError('INVALID_RESOLUTION', `resolution is empty; allowed: ${listed.join(', ')}`);
    parseResolution(v, listed, listed[0]!);
  },
};

function readerMessage(param: string, value: unknown, listed?: unknown[]): string | null {
  const read = READERS[param];
  if (!read || typeof value !== 'string') return null;
  try {
    read(value, listed as string[] | undefined);
  } catch (e) {
    if (e instanceof ApiError) return e.message;
  }
  return null;
}

/** `/slots/1/powerW` → `slots[1].powerW`: how a body member is named in a message */
function memberName(instancePath: string, missing: string): string {
  const parts = instancePath.split('/').filter((p) => p !== '');
  if (missing) parts.push(missing);
  return parts.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

function validationMessage(err: FastifyError, req: FastifyRequest): { code: string; message: string } {
  const v = err.validation?.[0];
  const where = err.validationContext ?? 'request';
  if (where === 'body' && v && v.keyword !== 'minProperties' && (v.instancePath || v.keyword === 'required')) {
    // a member of a JSON body: named by its path, a plan's slot with its index (SLOT_INVALID)
    const missing = v.keyword === 'required' ? String((v.params as { missingProperty?: unknown }).missingProperty) : '';
    const name = memberName(v.instancePath, missing);
    // a union of constants (a slot's mode) fails once per constant: together they are the list
    const consts = (err.validation ?? [])
      .filter((e) => e.keyword === 'const' && e.instancePath === v.instancePath)
      .map((e) => (e.params as { allowedValue?: unknown }).allowedValue);
    const allowed = consts.length > 0 ? consts : (v.params as { allowedValues?: unknown[] }).allowedValues;
    const what = missing
      ? 'is required'
      : v.keyword === 'additionalProperties'
        ? `has no member '${String((v.params as { additionalProperty?: unknown }).additionalProperty).slice(0, 40)}'`
        : allowed
          ? `must be one of ${allowed.join(', ')}`
          : (v.message ?? 'is invalid');
    const code = name.startsWith('slots[') ? ErrorCodes.SLOT_INVALID.code : ErrorCodes.INVALID_PARAMETER.code;
    return { code, message: `${name} ${what}` };
  }
  const missing =
    v?.keyword === 'required' ? String((v.params as { missingProperty?: unknown }).missingProperty ?? '') : '';
  if (v?.keyword === 'minProperties') {
    // an object whose every member is optional but that needs one (PATCH of a device)
    const names = Object.keys(
      (req.routeOptions.schema?.[where as 'body'] as { properties?: object } | undefined)?.properties ?? {},
    );
    const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : (names[0] ?? 'a member');
    return { code: ErrorCodes.MISSING_PARAMETER.code, message: `the ${where} needs ${list}` };
  }
  const param = missing || (v?.instancePath ?? '').replace(/^\//, '').split('/')[0] || '';
  // a parameter with listed values names them (a route's own list: savings has P1M, telemetry not)
  const schema = req.routeOptions.schema?.[where as 'querystring'] as
    | { properties?: Record<string, { enum?: unknown[] }> }
    | undefined;
  const listed = schema?.properties?.[param]?.enum;
  const hint = listed ? `; allowed: ${listed.join(', ')}` : ACCEPTS[param] ? `; expected ${ACCEPTS[param]}` : '';
  if (missing)
    return { code: ErrorCodes.MISSING_PARAMETER.code, message: `${where} parameter '${missing}' is required${hint}` };
  const source = where === 'querystring' ? req.query : where === 'params' ? req.params : undefined;
  const value = (source as Record<string, unknown> | undefined)?.[param];
  return {
    code: CODES[param] ?? ErrorCodes.INVALID_PARAMETER.code,
    message:
      readerMessage(param, value, listed) ??
      `${where} parameter '${param}' ${v?.keyword === 'pattern' ? 'does not have the form' : (v?.message ?? 'is invalid')}${hint}`,
  };
}

/**
 * Answers of fastify's router that come before any route (Fastify's `frameworkErrors` option),
 * in the error body like every other: a path parameter over the router's limit is the 400
 * INVALID_PARAMETER the docs promise (fastify's own is a 414), and a path that is not valid
 * percent-encoding is named without echoing the URL (its query may carry what a client should
 * not have sent, and the answer goes wherever the request came from).
 */
export function frameworkErrors(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  const code = ErrorCodes.INVALID_PARAMETER.code;
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return void reply
      .status(400)
      .send(errorBody(400, code, `a path parameter is longer than ${MAX_PATH_PARAM} characters`));
  if (err.code === 'FST_ERR_BAD_URL')
    return void reply
      .status(400)
      .send(errorBody(400, code, 'the path is not valid percent-encoding (RFC 3986): encode % as %25'));
  reply.status(500).send(errorBody(500, ErrorCodes.INTERNAL.code, 'internal error; the gateway log has the details'));
}

/** A route's path as a pattern over request paths (`:name` is one segment, as fastify's router reads it). */
function pathPattern(url: string): RegExp {
  const esc = url
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${esc}$`);
}

/**
 * Every 4xx/5xx leaves in fastify's error shape with a named code (docs/design.md). Unexpected
 * faults are logged with their stack and answered without internals.
 */
export function installErrorHandling(app: FastifyInstance): void {
  // every route's path and methods, so a known path with another method is a 405 with Allow (RFC 9110 §15.5.6)
  const routes = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  app.addHook('onRoute', (route) => {
    const r = routes.get(route.url) ?? { pattern: pathPattern(route.url), methods: new Set<string>() };
    for (const m of [route.method].flat()) r.methods.add(m);
    if (r.methods.has('GET')) r.methods.add('HEAD');
    routes.set(route.url, r);
  });
  // a path with no route for the method is answered before its body is read or its caller
  // checked: neither changes that the request cannot succeed (issue 44 item 1)
  app.addHook('onRequest', (req, reply, done) => {
    if (!req.is404) return done();
    notFound(req, reply);
  });
  app.setErrorHandler((thrown: FastifyError, req, reply) => {
    const err = thrown.validation ? thrown : namedError(thrown);
    if (err instanceof ApiError) {
      // the rest of a refused body is not read: the connection ends with the answer, lingering
      if (err.code.startsWith('BODY_')) {
        reply.header('Connection', 'close');
        lingerOnClose(req.raw);
      }
      if (err.retryAfter !== undefined) reply.header('Retry-After', String(err.retryAfter));
      return reply.status(err.statusCode).send(errorBody(err.statusCode, err.code, err.message));
    }
    if (err.validation) {
      const { code, message } = validationMessage(err, req);
      return reply.status(400).send(errorBody(400, code, message));
    }
    const refused = storageRefusal(err);
    if (refused) {
      // a full or failing data disk is not the caller's fault nor a bug: try again later (docs/design.md "Field faults: what the numbers survive")
      req.log.warn(
        { code: err.code, path: req.url.split('?')[0] },
        'a write was refused: the data disk takes none now',
      );
      reply.header('Retry-After', String(refused.retryAfter));
      return reply.status(refused.statusCode).send(errorBody(refused.statusCode, refused.code, refused.message));
    }
    const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (status >= 400 && status < 500) {
      return reply.status(status).send(errorBody(status, err.code ?? 'BAD_REQUEST', err.message));
    }
    req.log.error({ err, method: req.method, path: req.url.split('?')[0] }, 'request failed');
    return reply
      .status(500)
      .send(errorBody(500, ErrorCodes.INTERNAL.code, 'internal error; the gateway log has the details'));
  });
  app.setNotFoundHandler((req, reply) => notFound(req, reply));
  function notFound(req: FastifyRequest, reply: FastifyReply): void {
    const path = req.url.split('?')[0]!;
    const allow = new Set<string>();
    for (const r of routes.values()) if (r.pattern.test(path)) for (const m of r.methods) allow.add(m);
    if (allow.size > 0) {
      const methods = [...allow].sort().join(', ');
      return void reply
        .status(405)
        .header('Allow', methods)
        .send(
          errorBody(
            405,
            ErrorCodes.METHOD_NOT_ALLOWED.code,
            `${req.method} is not a method of ${path.slice(0, 200)}; allowed: ${methods}`,
          ),
        );
    }
    void reply
      .status(404)
      .send(errorBody(404, ErrorCodes.ROUTE_NOT_FOUND.code, `no route ${req.method} ${path.slice(0, 200)}`));
  }
}

export const ErrorBodySchema = {
  type: 'object',
  properties: {
    statusCode: { type: 'integer' },
    error: { type: 'string' },
    code: { type: 'string' },
    message: { type: 'string' },
  },
  required: ['statusCode', 'error', 'code', 'message'],
} as const;
