/**
 * The token service as the WebSocket streams need it (src/api/ws/server.ts WsAccess): the
 * upgrade request's bearer token checked exactly as on HTTP (svc/device.read, the same 401/403
 * answers and RFC 6750 challenge), the same check again while the socket is open, and the
 * devices each class of stream may carry for a client.
 */
import type { IncomingMessage } from 'node:http';
import type { Requirement } from '../../auth/bearer.js';
import type { Principal } from '../../auth/context.js';
import type { AuthService } from '../../auth/service.js';
import type { WsAccess, WsAuthResult, WsGrantEnd, WsPrincipal } from '../ws/server.js';
import { failureResponse } from './guard.js';

const NEED: Requirement = { permission: 'device.read' };

/** What a socket was let in on, to tell later whether it still holds. */
interface Grant {
  /**
   * the Authorization header of the upgrade: the recheck runs the very check HTTP runs (revoked,
   * expired, client removed). Held in memory only, as long as the socket is; never logged.
   */
  authorization: string;
  expiresAt: number;
  devices: Principal['devices'];
}

function sameDevices(a: Principal['devices'], b: Principal['devices']): boolean {
  if (a === 'all' || b === 'all') return a === b;
  return a.size === b.size && [...a].every((d) => b.has(d));
}

export function wsAccess(auth: AuthService): WsAccess {
  const grants = new WeakMap<WsPrincipal, Grant>();
  return {
    authenticate(req: IncomingMessage): WsAuthResult {
      const authorization = req.headers.authorization;
      const r = auth.check(authorization, NEED);
      if (r.ok) {
        const principal: WsPrincipal = { clientId: r.principal.clientId, expiresInMs: r.expiresAt - auth.now() };
        grants.set(principal, { authorization: authorization!, expiresAt: r.expiresAt, devices: r.principal.devices });
        return { ok: true, principal };
      }
      const f = failureResponse(r.failure);
      return { ok: false, statusCode: f.statusCode, headers: f.headers, body: f.body };
    },
    recheck(p: WsPrincipal): WsGrantEnd | null {
      const g = grants.get(p);
      if (!g) return 'revoked';
      const r = auth.check(g.authorization, NEED);
      // a token both expired and revoked ends as expired: either way it needs replacing
      if (!r.ok) return auth.now() >= g.expiresAt ? 'expired' : 'revoked';
      return sameDevices(g.devices, r.principal.devices) ? null : 'devices-changed';
    },
    partnerDevices: (p) => auth.partnerDevices(p.clientId),
    customerDevices: (p) => auth.customerDevices(p.clientId),
  };
}
