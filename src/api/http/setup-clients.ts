/**
 * Partner clients and bus scans from the setup page (src/api/http/setup.ts), behind the owner's
 * session:
 *   GET  /setup/clients.json  the clients with their devices (no secret)
 *   POST /setup/clients       {id, name?, devices: [...]}: 201 with the secret, once, made as
 *                             `sitegw clients add` makes it (src/auth/clients.ts). Clients live in
 *                             the database, so no restart is needed: the token service reads them there.
 *   POST /setup/scan          {tcp: "host[:port]", units: "1-10"}: the devices found, as site.yaml
 *                             entries with ids the site does not have (src/setup/scan.ts); the page
 *                             adds the ones picked through POST /setup/config
 */
import type { Database } from 'better-sqlite3';
import type { FastifyPluginAsync } from 'fastify';
import { addClient, ClientError, listClients } from '../../auth/clients.js';
import { errorBody } from '../../core/errors.js';
import { ModbusError } from '../../modbus/errors.js';
import { type ScannedDevice, ScanRequestError } from '../../setup/scan.js';
import { sameOrigin } from './status.js';

export interface SetupClientsDeps {
  db: Database;
  /** the site's device ids: a client is given only these */
  devices: () => string[];
  /** TCP scans from the page; one at a time */
  scan?: (tcp: string, units: string, taken: ReadonlySet<string>) => Promise<ScannedDevice[]>;
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

  let scanning = false;
  app.post<{ Body: unknown }>('/setup/scan', { config: OWNER, schema: { hide: true } }, async (req, reply) => {
    if (!sameOrigin(req, deps.https))
      return reply
        .code(403)
        .send(errorBody(403, 'CROSS_SITE_FORM', 'this scan must be sent from the gateway’s own page'));
    const b = req.body as { tcp?: unknown; units?: unknown } | undefined;
    if (typeof b?.tcp !== 'string' || (b.units !== undefined && typeof b.units !== 'string'))
      return reply.code(400).send(errorBody(400, 'INVALID_BODY', 'send {"tcp": "192.168.1.50:502", "units": "1-10"}'));
    if (!deps.scan) return reply.code(409).send(errorBody(409, 'SETUP_UNAVAILABLE', 'this gateway scans no bus'));
    if (scanning) return reply.code(409).send(errorBody(409, 'SCAN_BUSY', 'a scan is running: wait for its answer'));
    scanning = true;
    try {
      const found = await deps.scan(b.tcp, b.units ?? '1-10', new Set(deps.devices()));
      return reply.header('Cache-Control', 'no-store').send({ found });
    } catch (e) {
      if (e instanceof ScanRequestError) return reply.code(400).send(errorBody(400, 'SCAN_REFUSED', e.message));
      // the bus could not be opened (host down, port closed): the owner's to fix, not a fault
      if (e instanceof ModbusError && e.kind === 'connection')
        return reply.code(502).send(errorBody(502, 'SCAN_UNREACHABLE', (e as Error).message));
      throw e;
    } finally {
      scanning = false;
    }
  });
};
