/**
 * Lenient query parameters where the spec is silent (docs/design.md "lenient input"), shared by
 * every HTTP route (a preValidation hook reading the route's querystring schema,
 * http/lenient-query.ts) and the WebSocket query: what common clients send is accepted, what the
 * gateway sends stays strict.
 *
 * - a boolean is `true/false/1/0` in any case; an empty value (`?compact=` or `?compact`) counts
 *   as absent, so the parameter's default applies;
 * - a comma-list parameter (schema keyword `x-comma-list`) may be repeated: `include=default&include=energy`
 *   is `include=default,energy`;
 * - any other parameter given twice with the same value is taken once, with different values
 *   it is a 400 (which one was meant cannot be known);
 * - unknown parameters are ignored (the route schemas do not forbid additional properties).
 */
import { apiError } from '../core/errors.js';

const TRUE = new Set(['true', '1']);
const FALSE = new Set(['false', '0']);

/** One value of a parameter that may have been repeated. */
export function singleValue(name: string, raw: string | readonly string[], list: boolean): string {
  if (typeof raw === 'string') return raw;
  if (list) return raw.join(',');
  const distinct = [...new Set(raw)];
  if (distinct.length > 1) {
    const message = `query parameter '${name}' is given ${raw.length} times with different values; give it once`;
    throw apiError('INVALID_PARAMETER', message);
  }
  return distinct[0] ?? '';
}

/** `true/false/1/0` in any case → boolean; '' → undefined (absent); anything else is for the schema to refuse. */
export function lenientBoolean(text: string): boolean | string | undefined {
  const t = text.trim().toLowerCase();
  if (t === '') return undefined;
  if (TRUE.has(t)) return true;
  if (FALSE.has(t)) return false;
  return text;
}
