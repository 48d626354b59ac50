/**
 * The token service as the WebSocket streams need it (src/api/ws/server.ts WsAccess): the
 * upgrade request's bearer token checked exactly as on HTTP (svc/device.read, the same 401/403
 * answers and RFC 6750 challenge), and the devices each class of stream may carry for a client.
 */
import type { IncomingMessage } from 'node:http';
import type { AuthService } from '../../auth/service.js';
import type { WsAccess, WsAuthResult } from '../ws/server.js';
import { failureResponse } from './guard.js';

export function wsAccess(auth: AuthService): WsAccess {
  return {
    authenticate(req: IncomingMessage): WsAuthResult {
      const r = auth.check(req.headers.authorization, { permission: 'device.read' });
      if (r.ok) return { ok: true, principal: r.principal };
      const f = failureResponse(r.failure);
      return { ok: false, statusCode: f.statusCode, headers: f.headers, body: f.body };
    },
    partnerDevices: (p) => auth.partnerDevices(p.clientId),
    customerDevices: (p) => auth.customerDevices(p.clientId),
  };
}
