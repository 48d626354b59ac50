import swagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ApiDeps } from './deps.js';
import { devicesRoutes } from './devices.js';
import { installErrorHandling } from './errors.js';
import { TopologyNode } from './schemas.js';
import { sitesRoutes } from './sites.js';

export interface BuildOptions extends ApiDeps {
  logger?: Logger | false;
  version?: string;
}

/** Builds the HTTP app without listening, so tests use app.inject() and main decides where to listen. */
export async function buildApp(opts: BuildOptions): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger as FastifyBaseLogger } : { logger: false }),
    // partners on a LAN send small requests; anything larger is a mistake or an attack
    bodyLimit: 1 << 20,
    routerOptions: { maxParamLength: 200 },
    ajv: { customOptions: { coerceTypes: true, allErrors: false } },
  });

  installErrorHandling(app);
  app.addSchema(TopologyNode);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'sitegw Energy Site API', version: opts.version ?? '0.0.0', description: 'Energy Site Partner and Customer API served by the site gateway' },
      tags: [{ name: 'sites' }, { name: 'devices' }],
    },
    refResolver: { buildLocalReference: (json, _base, _frag, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  const deps: ApiDeps = { site: opts.site, db: opts.db };
  await app.register(sitesRoutes, deps);
  await app.register(devicesRoutes, deps);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.ready();
  return app;
}
