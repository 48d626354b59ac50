/**
 * Partner clients from the setup page (src/api/http/setup.ts), as `sitegw clients add` makes
 * them (src/auth/clients.ts: the same checks, the secret shown once, devices checked against the
 * site), behind the owner's session:
 *   GET  /setup/clients.json  the clients with their devices (no secret)
 *   POST /setup/clients       {id, name?, devices: [...]}: 201 with the secret, once
 * Clients live in the database, so no restart is needed: the token service reads them there.
 */
import type { Database } from 'better-sqlite3';
import type { FastifyPluginAsync } from 'fastify';
import { addClient, ClientError, listClients } from '../../auth/clients.js';
import { errorBody } from '../../core/errors.js';
import { sameOrigin } from './status.js';

export interface SetupClientsDeps {
  db: Database;
  /** the site's device ids: a client is given only these */
  devices: () => string[];
  https: boolean;
  now?: () => number;
}

const OWNER = { auth: 'owner' } as const;

const shown = (c: { id: string; name: string; scopes: string[]; devices: string[] }) => ({
  id: c.id,
  name: c.name,
  scopes: c.scopes,
  devices: c.devices,
});

export const setupClientsRoutes: FastifyPluginAsync<SetupClientsDeps> = async (app, deps) => {
  app.get('/setup/clients.json', { config: OWNER, schema: { hide: true } }, async (_req, reply) =>
    reply
      .header('Cache-Control', 'no-store')
      .send({ devices: deps.devices(), clients: listClients(deps.db).map(shown) }),
  );

  app.post<{ Body: unknown }>('/setup/clients', { config: OWNER, schema: { hide: true } }, async (req, reply) => {
    if (!sameOrigin(req, deps.https))
      return reply
        .code(403)
        .send(errorBody(403, 'CROSS_SITE_FORM', 'this change must be sent from the gateway’s own page'));
    const b = req.body as { id?: unknown; name?: unknown; devices?: unknown } | undefined;
    const devices = b?.devices;
    if (
      typeof b?.id !== 'string' ||
      (b.name !== undefined && typeof b.name !== 'string') ||
      !Array.isArray(devices) ||
      devices.some((d) => typeof d !== 'string')
    )
      return reply
        .code(400)
        .send(errorBody(400, 'INVALID_BODY', 'send {"id": "app", "name": "…", "devices": ["inverter", …]}'));
    try {
      const { client, secret } = await addClient(
        deps.db,
        { id: b.id, name: b.name as string | undefined, devices: devices as string[] },
        (deps.now ?? Date.now)(),
        new Set(deps.devices()),
      );
      return reply
        .code(201)
        .header('Cache-Control', 'no-store')
        .send({ client: shown(client), secret });
    } catch (e) {
      if (e instanceof ClientError) return reply.code(400).send(errorBody(400, 'CLIENT_REFUSED', e.message));
      throw e;
    }
  });
};
