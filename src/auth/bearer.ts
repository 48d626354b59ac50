/**
 * Checking `Authorization: Bearer <token>` (RFC 6750 §2.1) and what the token allows. The answer
 * is neutral data; the HTTP guard and the WebSocket upgrade turn a failure into a 401 or 403 with
 * the RFC 6750 §3 challenge.
 */
import { clientActive, clientDevices } from '../store/clients.js';
import { findToken } from '../store/tokens.js';
import type { AuthContext, Principal } from './context.js';
import { partnerDevices } from './principal.js';
import { hasPermission, type Permission, wireScope } from './scopes.js';
import { sha256 } from './secrets.js';

export interface AuthFailure {
  status: 401 | 403;
  /** absent when the request carried no bearer token at all (RFC 6750 §3.1) */
  error?: 'invalid_token' | 'insufficient_scope';
  description: string;
  /** the scope that would have been enough */
  scope?: string;
  /** the named API error code of the body */
  code: 'UNAUTHORIZED' | 'INVALID_TOKEN' | 'INSUFFICIENT_SCOPE' | 'CUSTOMER_TOKEN_REQUIRED';
}

export type BearerCheck =
  | {
      ok: true;
      principal: Principal;
      /** when the token stops working by itself (ms epoch, auth clock): an open WebSocket ends then */
      expiresAt: number;
    }
  | { ok: false; failure: AuthFailure };

/** What a route asks of its caller. */
export interface Requirement {
  permission: Permission;
  /** only a token issued on the owner's consent will do (e.g. changing publishTo) */
  customer?: boolean;
}

/** RFC 6750 §2.1 b64token */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

const invalid = (description: string): BearerCheck => ({
  ok: false,
  failure: { status: 401, error: 'invalid_token', description, code: 'INVALID_TOKEN' },
});

export function verifyBearer(ctx: AuthContext, header: string | undefined): BearerCheck {
  const m = header === undefined ? null : /^Bearer(?: +(.*))?$/i.exec(header.trim());
  if (!m) {
    return {
      ok: false,
      failure: {
        status: 401,
        description: 'this endpoint needs Authorization: Bearer <access token>',
        code: 'UNAUTHORIZED',
      },
    };
  }
  const token = (m[1] ?? '').trim();
  if (token === '' || token.length > 512 || !B64TOKEN.test(token)) return invalid('the bearer token is malformed');
  const known = ctx.verified.get(ctx.db, token);
  if (known && known.expiresAt > ctx.now()) return known;
  const hash = sha256(token);
  const row = findToken(ctx.db, hash, 'access') ?? ctx.unsaved.find(ctx.db, hash, ctx.now());
  if (!row) return invalid('the access token is unknown');
  if ('revokedAt' in row && row.revokedAt !== null) return invalid('the access token was revoked');
  if (row.expiresAt <= ctx.now()) return invalid('the access token expired; request a new one');
  if (!clientActive(ctx.db, row.clientId)) return invalid('the access token was revoked (its client was removed)');
  const verified = {
    ok: true as const,
    principal: {
      clientId: row.clientId,
      customer: row.customer,
      scopes: new Set(row.scopes),
      devices: row.customer ? ('all' as const) : partnerDevices(clientDevices(ctx.db, row.clientId), ctx.devicesBehind),
    },
    expiresAt: row.expiresAt,
  };
  ctx.verified.set(token, verified);
  return verified;
}

export function checkRequirement(principal: Principal, need: Requirement): AuthFailure | undefined {
  const scope = wireScope(need.permission);
  if (!hasPermission(principal.scopes, need.permission)) {
    return {
      status: 403,
      error: 'insufficient_scope',
      description: `this call needs scope ${scope}`,
      scope,
      code: 'INSUFFICIENT_SCOPE',
    };
  }
  if (need.customer && !principal.customer) {
    return {
      status: 403,
      error: 'insufficient_scope',
      description: "this call needs a customer token: one issued on the site owner's consent (authorization-code flow)",
      scope,
      code: 'CUSTOMER_TOKEN_REQUIRED',
    };
  }
  return undefined;
}

/** Authentication and the requirement in one step, for callers outside fastify (the WebSocket upgrade). */
export function authorizeBearer(ctx: AuthContext, header: string | undefined, need: Requirement): BearerCheck {
  const r = verifyBearer(ctx, header);
  if (!r.ok) return r;
  const failure = checkRequirement(r.principal, need);
  return failure ? { ok: false, failure } : r;
}

export const REALM = 'sitegw';

/** The RFC 6750 §3 challenge. */
export function challenge(f: AuthFailure): string {
  const q = (s: string) => `"${s.replace(/[\\"]/g, '\\$&')}"`;
  const parts = [`realm=${q(REALM)}`];
  if (f.error) parts.push(`error=${q(f.error)}`, `error_description=${q(f.description)}`);
  if (f.scope) parts.push(`scope=${q(f.scope)}`);
  return `Bearer ${parts.join(', ')}`;
}
