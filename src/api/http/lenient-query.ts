/**
 * The HTTP side of the lenient query rules (../lenient-query.ts): a preValidation hook that applies
 * them to each parameter the route's querystring schema declares.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { lenientBoolean, singleValue } from '../lenient-query.js';

/** The schema keyword that marks a comma-separated list parameter (ajv knows it, see app.ts). */
export const COMMA_LIST = 'x-comma-list';

interface PropertySchema {
  type?: string;
  [COMMA_LIST]?: boolean;
}

export function installLenientQuery(app: FastifyInstance): void {
  // callback style for the same reason as the guard's hook (guard.ts); fastify's hook runner
  // passes what apply throws (a repeated parameter's 400) on to the error handler
  app.addHook('preValidation', (req, _reply, done) => {
    apply(req);
    done();
  });
}

function apply(req: FastifyRequest): void {
  const schema = req.routeOptions.schema?.querystring as { properties?: Record<string, PropertySchema> } | undefined;
  const props = schema?.properties;
  if (!props || req.query === null || typeof req.query !== 'object') return;
  const q = req.query as Record<string, string | string[] | boolean | undefined>;
  for (const [name, prop] of Object.entries(props)) {
    const raw = q[name];
    if (raw === undefined || typeof raw === 'boolean') continue;
    const bool = prop.type === 'boolean';
    // booleans are compared by meaning, so compact=1&compact=true is one value
    const values = bool ? (typeof raw === 'string' ? [raw] : raw).map((t) => String(lenientBoolean(t) ?? '')) : raw;
    const one = singleValue(name, values, prop[COMMA_LIST] === true);
    const v = bool ? lenientBoolean(one) : one;
    if (v === undefined) delete q[name];
    else q[name] = v;
  }
}
