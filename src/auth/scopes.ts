/**
 * Scopes of the Energy Site API (docs/api.md "Scopes"). The spec writes them with the prefix `svc/`, and
 * that is how they travel on the wire here too: in `scope` parameters, token responses, the
 * WWW-Authenticate `scope` attribute and the OpenAPI document. A request may also name a scope
 * without the prefix (`device.read`); it is read as the prefixed one. `openid` is accepted so
 * OpenID Connect client libraries, which always ask for it, work unchanged; it grants nothing.
 */
export const SCOPE_PREFIX = 'svc/';

/** What a route can require (plans: src/api/http/plan.ts). */
export type Permission = 'device.read' | 'device.write' | 'plan.read' | 'plan.write';
export const PERMISSIONS: readonly Permission[] = ['device.read', 'device.write', 'plan.read', 'plan.write'];

export const PERMISSION_TEXT: Record<Permission, string> = {
  'device.read': 'read device metadata and telemetry',
  'device.write': "change devices, including who receives their realtime telemetry and the battery's operation mode",
  'plan.read': "read the battery's charge and discharge plans and how they went",
  'plan.write': 'send plans that charge, discharge or hold the battery',
};

export const OPENID = 'openid';

/** The wire spelling of a permission. */
export const wireScope = (p: Permission): string => `${SCOPE_PREFIX}${p}`;

export const ALL_SCOPES: readonly string[] = [...PERMISSIONS.map(wireScope), OPENID];

/** A scope token of RFC 6749 §3.3: printable ASCII without space, '"' or '\'. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

export class ScopeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScopeError';
  }
}

/** One scope in its canonical wire spelling, or undefined when it is not a scope of this gateway. */
export function canonicalScope(s: string): string | undefined {
  if (s === OPENID) return OPENID;
  const bare = s.startsWith(SCOPE_PREFIX) ? s.slice(SCOPE_PREFIX.length) : s;
  return (PERMISSIONS as readonly string[]).includes(bare) ? `${SCOPE_PREFIX}${bare}` : undefined;
}

/**
 * A space-separated `scope` parameter → canonical scopes, without duplicates, in the order of
 * ALL_SCOPES. Throws ScopeError naming the first unknown scope.
 */
export function parseScopeParam(text: string): string[] {
  const words = text.split(' ').filter((w) => w !== '');
  if (words.length === 0) throw new ScopeError('scope is empty; name at least one scope, e.g. svc/device.read');
  return parseScopeList(words);
}

export function parseScopeList(words: readonly string[]): string[] {
  const found = new Set<string>();
  for (const w of words) {
    const c = SCOPE_TOKEN.test(w) ? canonicalScope(w) : undefined;
    if (!c) throw new ScopeError(`unknown scope '${w.slice(0, 60)}'; known scopes: ${ALL_SCOPES.join(', ')}`);
    found.add(c);
  }
  return ALL_SCOPES.filter((s) => found.has(s));
}

export const formatScopes = (scopes: readonly string[]): string => scopes.join(' ');

export function hasPermission(scopes: Iterable<string>, p: Permission): boolean {
  const want = wireScope(p);
  for (const s of scopes) if (s === want) return true;
  return false;
}

/** Scopes of `requested` that `allowed` does not contain. */
export function notAllowed(requested: readonly string[], allowed: readonly string[]): string[] {
  return requested.filter((s) => !allowed.includes(s));
}
