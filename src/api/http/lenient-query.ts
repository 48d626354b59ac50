/**
 * Lenient query parameters where the spec is silent (docs/design.md "lenient input"), shared by every
 * HTTP route (a preValidation hook reading the route's querystring schema) and the WebSocket
 * query: what common clients send is accepted, what the gateway sends stays strict.
 *
 * - a boolean is `true/false/1/0` in any case; an empty value (`?compact=` or `?compact`) counts
 *   as absent, so the parameter's default applies;
 * - a comma-list parameter (schema keyword `x-comma-list`) may be repeated: `include=default&include=energy`
 *   is `include=default,energy`;
 * - any other parameter given twice with the same value is taken once, with different values
 *   it is a 400 (which one was meant cannot be known);
 * - unknown parameters are ignored (the route schemas do not forbid additional properties).
 */
import type { FastifyInstance } from 'fastify';
import { apiError } from '../../core/errors.js';

/** The schema keyword that marks a comma-separated list parameter (ajv knows it, see app.ts). */
export const COMMA_LIST = 'x-comma-list';

const TRUE = new Set(['true', '1']);
const FALSE = new Set(['false', '0']);

/** One value of a parameter that may have been repeated. */
export function singleValue(name: string, raw: string | readonly string[], list: boolean): string {
  if (typeof raw === 'string') return raw;
  if (list) return raw.join(',');
  const distinct = [...new Set(raw)];
  if (distinct.length > 1) throw apiError('INVALID_PARAMETER', `query parameter '${name}' is given ${raw.length} times with different values; give it once`);
  return distinct[0] ?? '';
}

/** `true/false/1/0` in any case → boolean; '' → undefined (absent); anything else is left for the schema to refuse. */
export function lenientBoolean(text: string): boolean | string | undefined {
  const t = text.trim().toLowerCase();
  if (t === '') return undefined;
  if (TRUE.has(t)) return true;
  if (FALSE.has(t)) return false;
  return text;
}

interface PropertySchema {
  type?: string;
  [COMMA_LIST]?: boolean;
}

export function installLenientQuery(app: FastifyInstance): void {
  app.addHook('preValidation', async (req) => {
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
  });
}
