import type { FastifyError, FastifyInstance } from 'fastify';
import { ApiError, ErrorCodes, errorBody } from '../../core/errors.js';

/** What each query/path parameter accepts, so a 400 can say what would be right. */
const ACCEPTS: Record<string, string> = {
  interval: 'an ISO 8601 interval in UTC: start/end, start/duration or duration/end, e.g. 2026-11-01T00:00:00Z/P1D',
  resolution: 'an ISO 8601 duration: PT15M, PT1H or P1D',
  include: 'a comma-separated list of default and/or energy',
  compact: 'true, false, 1 or 0 (any case)',
};

function validationMessage(err: FastifyError): { code: string; message: string } {
  const v = err.validation?.[0];
  const where = err.validationContext ?? 'request';
  const missing =
    v?.keyword === 'required' ? String((v.params as { missingProperty?: unknown }).missingProperty ?? '') : '';
  const param = missing || (v?.instancePath ?? '').replace(/^\//, '').split('/')[0] || '';
  const hint = ACCEPTS[param] ? `; expected ${ACCEPTS[param]}` : '';
  if (missing)
    return { code: ErrorCodes.MISSING_PARAMETER.code, message: `${where} parameter '${missing}' is required${hint}` };
  return {
    code: ErrorCodes.INVALID_PARAMETER.code,
    message: `${where} parameter '${param}' ${v?.message ?? 'is invalid'}${hint}`,
  };
}

/**
 * Every 4xx/5xx leaves in fastify's error shape with a named code (docs/design.md). Unexpected
 * faults are logged with their stack and answered without internals.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof ApiError) {
      if (err.retryAfter !== undefined) reply.header('Retry-After', String(err.retryAfter));
      return reply.status(err.statusCode).send(errorBody(err.statusCode, err.code, err.message));
    }
    if (err.validation) {
      const { code, message } = validationMessage(err);
      return reply.status(400).send(errorBody(400, code, message));
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
  app.setNotFoundHandler((req, reply) => {
    reply
      .status(404)
      .send(errorBody(404, ErrorCodes.ROUTE_NOT_FOUND.code, `no route ${req.method} ${req.url.split('?')[0]}`));
  });
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
