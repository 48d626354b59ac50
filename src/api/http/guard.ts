/**
 * Every route says in its config who may call it: `auth: 'public'` (token service, consent page,
 * OpenAPI document) or the scope it needs (`auth: { permission: 'device.read' }`). A route that
 * says nothing is refused at registration, so a new endpoint cannot ship unguarded by omission.
 * The check runs in onRequest, before the body is read or validated.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type AuthFailure, challenge, checkRequirement, type Requirement } from '../../auth/bearer.js';
import type { Principal } from '../../auth/context.js';
import { wireScope } from '../../auth/scopes.js';
import type { AuthService } from '../../auth/service.js';
import { type ErrorBody, errorBody } from '../../core/errors.js';
import { ErrorBodySchema } from './errors.js';

/**
 * `'owner'`: the installer's status page, for the site owner logged in with a session cookie
 * (src/api/http/status-session.ts) rather than a bearer token; not part of the API document.
 */
export type RouteAuth = 'public' | 'owner' | Requirement;

/** Tells whether a request carries a valid owner session. */
export interface OwnerGate {
  check(req: FastifyRequest): boolean;
  /** where a browser without a session is sent */
  loginPath: string;
}

export interface RouteEntry {
  method: string;
  url: string;
  auth: RouteAuth;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
  interface FastifyRequest {
    /** set by the guard on every non-public route */
    principal: Principal | null;
  }
  interface FastifyInstance {
    /** every route with its auth requirement, as registered (tests walk it) */
    routeTable: RouteEntry[];
  }
}

/** The HTTP answer to a failed check: status, RFC 6750 challenge and the API error body. */
export function failureResponse(f: AuthFailure): {
  statusCode: number;
  headers: Record<string, string>;
  body: ErrorBody;
} {
  return {
    statusCode: f.status,
    headers: { 'WWW-Authenticate': challenge(f) },
    body: errorBody(f.status, f.code, f.description),
  };
}

function deny(reply: FastifyReply, f: AuthFailure): FastifyReply {
  const r = failureResponse(f);
  return reply.code(r.statusCode).headers(r.headers).send(r.body);
}

export function installGuard(app: FastifyInstance, auth: AuthService, owner?: OwnerGate): void {
  app.decorate('routeTable', [] as RouteEntry[]);
  app.decorateRequest('principal', null);

  app.addHook('onRoute', (route) => {
    const need = route.config?.auth;
    if (!need)
      throw new Error(
        `route ${String(route.method)} ${route.url} declares no config.auth: give it 'public' or the permission it needs`,
      );
    for (const method of [route.method].flat()) app.routeTable.push({ method, url: route.url, auth: need });
    if (need === 'public') return;
    if (need === 'owner') {
      if (!owner)
        throw new Error(`route ${String(route.method)} ${route.url} needs the owner login, and this server has none`);
      ((route.schema ??= {}) as { hide?: boolean }).hide = true;
      return;
    }
    // the OpenAPI document shows what each route needs and that it can answer 401/403
    const schema = (route.schema ??= {}) as { security?: unknown; response?: Record<string, unknown> };
    schema.security = [{ oauth2: [wireScope(need.permission)] }];
    schema.response = {
      ...schema.response,
      401: { ...ErrorBodySchema, description: 'No, malformed, expired or revoked bearer token (see WWW-Authenticate)' },
      403: {
        ...ErrorBodySchema,
        description: need.customer
          ? 'The token lacks the scope, or is not a customer token'
          : 'The token lacks the scope',
      },
    };
  });

  // callback style, not async: every API request passes here, and a promise and its microtask per
  // hook were a measurable part of a request's cost under --lite-mode (bench/telemetry-http.ts)
  app.addHook('onRequest', (req, reply, done) => {
    if (req.is404) return done();
    const need = req.routeOptions.config.auth;
    if (need === 'public') return done();
    if (!need) return done(new Error(`route ${req.method} ${req.routeOptions.url ?? ''} has no auth requirement`));
    if (need === 'owner') {
      if (owner!.check(req)) return done();
      // a browser goes to the login form; a script gets the error body (never a bearer challenge)
      if (req.method === 'GET' && (req.headers.accept ?? '').includes('text/html'))
        return void reply.code(303).header('Location', owner!.loginPath).send();
      return void reply
        .code(401)
        .send(errorBody(401, 'LOGIN_REQUIRED', `log in as the site owner at ${owner!.loginPath}`));
    }
    const r = auth.verify(req.headers.authorization);
    if (!r.ok) return void deny(reply, r.failure);
    const f = checkRequirement(r.principal, need);
    if (f) return void deny(reply, f);
    req.principal = r.principal;
    done();
  });
}

/** The caller of a guarded route; the guard has run, so it is set. */
export function principalOf(req: { principal: Principal | null }): Principal {
  if (!req.principal) throw new Error('principalOf called on a route without a guard');
  return req.principal;
}
