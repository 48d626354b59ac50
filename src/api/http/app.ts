import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Ajv } from 'ajv';
import type { Logger } from 'pino';
import { ALL_SCOPES, OPENID } from '../../auth/scopes.js';
import type { ApiDeps } from './deps.js';
import { devicesRoutes } from './devices.js';
import { installErrorHandling } from './errors.js';
import { installGuard } from './guard.js';
import { COMMA_LIST, installLenientQuery } from './lenient-query.js';
import { AUTHORIZE_PATH, oauthRoutes, TOKEN_PATH } from './oauth.js';
import { publishToRoute } from './publish-to.js';
import { savingsRoutes } from './savings.js';
import { TopologyNode } from './schemas.js';
import { sitesRoutes } from './sites.js';
import { tariffsRoutes } from './tariffs.js';
import type { Health } from '../../ops/health.js';
import type { Metrics } from '../../ops/metrics.js';
import type { StatusView } from '../../ops/status-view.js';
import { healthRoutes } from './health.js';
import { metricsRoutes } from './metrics.js';
import { LOGIN_PATH, statusRoutes } from './status.js';
import { OwnerSessions } from './status-session.js';

export interface BuildOptions extends ApiDeps {
  logger?: Logger | false;
  version?: string;
  /** serve HTTPS with this certificate and key (PEM) */
  https?: { cert: string; key: string };
  /** the daemon clock, ms (default real time): the default tariff page and which buckets savings count */
  now?: () => number;
  /** installer operations (src/ops): /healthz, /metrics and the status page at / */
  ops?: { health: Health; metrics: Metrics; status(): StatusView };
}

/** Builds the HTTP app without listening, so tests use app.inject() and main decides where to listen. */
export async function buildApp(opts: BuildOptions): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger as FastifyBaseLogger } : { logger: false }),
    ...(opts.https ? { https: opts.https } : {}),
    // fastify's request lines carry the query string, where a careless client may put a code or
    // token; the line below logs the path only
    logController: new LogController({ disableRequestLogging: true }),
    // partners on a LAN send small requests; anything larger is a mistake or an attack
    bodyLimit: 1 << 20,
    routerOptions: { maxParamLength: 200 },
    ajv: {
      customOptions: { coerceTypes: true, allErrors: false },
      // marks comma-list query parameters for the lenient query hook (lenient-query.ts)
      plugins: [(ajv: Ajv) => ajv.addKeyword({ keyword: COMMA_LIST, schemaType: 'boolean' })],
    },
  });
  app.addHook('onResponse', async (req, reply) => {
    req.log.info({ method: req.method, path: req.url.split('?')[0], statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });

  installErrorHandling(app);
  installLenientQuery(app);
  // before any route: it refuses routes that do not declare who may call them
  const sessions = opts.ops ? new OwnerSessions({ db: opts.db, https: opts.https !== undefined }) : undefined;
  installGuard(app, opts.auth, sessions && { check: (req) => sessions.check(req), loginPath: LOGIN_PATH });
  app.addSchema(TopologyNode);
  const scopes = Object.fromEntries(ALL_SCOPES.map((s) => [s, s === OPENID ? 'OpenID Connect: an id_token (granted in the code flow anyway)' : s]));
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'sitegw Energy Site API', version: opts.version ?? '0.0.0', description: 'Energy Site Partner and Customer API served by the site gateway' },
      tags: [{ name: 'sites' }, { name: 'devices' }, { name: 'oauth2' }, { name: 'tariffs' }],
      components: {
        securitySchemes: {
          oauth2: {
            type: 'oauth2',
            flows: {
              clientCredentials: { tokenUrl: TOKEN_PATH, scopes },
              authorizationCode: { authorizationUrl: AUTHORIZE_PATH, tokenUrl: TOKEN_PATH, scopes },
            },
          },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _base, _frag, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  const deps: ApiDeps = { site: opts.site, db: opts.db, auth: opts.auth };
  await app.register(oauthRoutes, deps);
  await app.register(sitesRoutes, deps);
  await app.register(devicesRoutes, deps);
  await app.register(publishToRoute, deps);
  const clocked = { ...deps, now: opts.now ?? Date.now };
  await app.register(tariffsRoutes, clocked);
  await app.register(savingsRoutes, clocked);
  if (opts.ops) {
    const ops = opts.ops;
    await app.register(healthRoutes, { health: ops.health });
    await app.register(metricsRoutes, { metrics: ops.metrics });
    await app.register(statusRoutes, { auth: opts.auth, sessions: sessions!, status: () => ops.status(), https: opts.https !== undefined });
  }
  app.get('/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async () => app.swagger());
  await app.ready();
  return app;
}
