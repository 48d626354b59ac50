import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/api/http/app.js';
import { addClient } from '../../src/auth/clients.js';
import { AuthService } from '../../src/auth/service.js';
import type { SiteConfig } from '../../src/config/types.js';
import { silentLogger } from '../../src/core/log.js';
import { type Database, openDatabase } from '../../src/store/db.js';
import { type Fixture, fixture } from './fixture.js';

export interface TariffApi extends Fixture {
  app: FastifyInstance;
  /** the daemon clock the app reads */
  clock: { now: number };
  /** bearer tokens: read+write on every device, read only (of the same client), and read on the inverter alone (another client) */
  tokens: { writer: string; reader: string; inverterOnly: string };
  req(method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, token?: string): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** The real HTTP app (guard included) over a real SQLite file, with partner clients holding tokens. */
export async function tariffApi(config: SiteConfig, now: number, db?: Database): Promise<TariffApi> {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-tariffs-'));
  const f = fixture(config, db ?? openDatabase(join(dir, 'sitegw.db')));
  const auth = new AuthService({ db: f.db, config: config.auth, dataDir: dir, siteId: f.site.id, log: silentLogger() });
  auth.start();
  const clock = { now };
  const app = await buildApp({
    site: f.site,
    db: f.db,
    auth,
    now: () => clock.now,
    tariffQuota: config.limits.dynamicTariffs,
  });
  const all = [...f.site.devices.keys()];
  const client = async (id: string, scopes: string[], devices: string[]) => ({
    id,
    secret: (await addClient(f.db, { id, scopes, devices }, Date.now())).secret!,
  });
  const token = async ({ id, secret }: { id: string; secret: string }, scopes: string[]) => {
    const res = await app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: {
        authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: `grant_type=client_credentials&scope=${encodeURIComponent(scopes.map((s) => `svc/${s}`).join(' '))}`,
    });
    if (res.statusCode !== 200) throw new Error(`token for ${id}: ${res.statusCode} ${res.body}`);
    return (res.json() as { access_token: string }).access_token;
  };
  const writer = await client('writer', ['device.read', 'device.write'], all);
  const tokens = {
    writer: await token(writer, ['device.read', 'device.write']),
    // the writer's own client with the read scope alone: tariffs belong to the client that made them
    reader: await token(writer, ['device.read']),
    inverterOnly: await token(await client('inverter-partner', ['device.read'], ['inv']), ['device.read']),
  };
  return {
    ...f,
    app,
    clock,
    tokens,
    req: (method, url, body, tok = tokens.writer) =>
      app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${tok}` },
        ...(body !== undefined ? { payload: body as object } : {}),
      }),
    async close() {
      await app.close();
      auth.stop();
      f.db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
