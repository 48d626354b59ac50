import type { Socket } from 'node:net';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import { ALL_SCOPES, OPENID } from '../../auth/scopes.js';
import type { HttpLimits, TariffQuota } from '../../config/types.js';
import { silentLogger } from '../../core/log.js';
import type { Health } from '../../ops/health.js';
import type { HistoryView, SiteHistory } from '../../ops/history.js';
import type { Metrics } from '../../ops/metrics.js';
import type { StatusView } from '../../ops/status-view.js';
import type { PlanChart } from '../../optimiser/plan-chart.js';
import { scanLink } from '../../setup/scan.js';
import { RefusalLog } from '../refusals.js';
import { clientErrorHandler, installJsonBody } from './body.js';
import { slotMetrics } from './connection-metrics.js';
import { Connections } from './connections.js';
import type { ApiDeps } from './deps.js';
import { devicesRoutes } from './devices.js';
import { frameworkErrors, installErrorHandling, MAX_PATH_PARAM } from './errors.js';
import { installGuard } from './guard.js';
import { healthRoutes } from './health.js';
import { installLenientQuery } from './lenient-query.js';
import { serverTimeouts } from './limits.js';
import { metricsRoutes } from './metrics.js';
import { AUTHORIZE_PATH, oauthRoutes, TOKEN_PATH } from './oauth.js';
import { planRoutes } from './plan.js';
import { publishToRoute } from './publish-to.js';
import { gateRequests } from './request-gate.js';
import { savingsRoutes } from './savings.js';
import { TopologyNode } from './schemas.js';
import { type SetupHandle, setupRoutes } from './setup.js';
import { setupClientsRoutes } from './setup-clients.js';
import { type SiteLimitsView, siteLimitsRoutes } from './site-limits.js';
import { sitesRoutes } from './sites.js';
import { LOGIN_PATH, statusRoutes } from './status.js';
import { OwnerSessions, type SessionStore } from './status-session.js';
import { tariffsRoutes } from './tariffs.js';
import { installValidators } from './validators.js';

export interface BuildOptions extends ApiDeps {
  logger?: Logger | false;
  version?: string;
  /** serve HTTPS with this certificate and key (PEM) */
  https?: { cert: string; key: string };
  /** the daemon clock, ms (default real time): the default tariff page and which buckets savings count */
  now?: () => number;
  /** installer operations (src/ops): /healthz, /metrics and the status page at / */
  ops?: {
    health: Health;
    metrics: Metrics;
    status(): StatusView;
    planCharts?(): PlanChart[];
    history?(view: HistoryView): SiteHistory;
  };
  /** timeouts and connection caps of the listening server (site.yaml limits.http); absent = node's and fastify's own (inject-only tests) */
  limits?: HttpLimits;
  /** the bounded log of refusals, shared with the WebSocket side (a new one when absent) */
  refusals?: RefusalLog;
  /** what one client may store of dynamic tariffs (site.yaml limits.dynamicTariffs) */
  tariffQuota: TariffQuota;
  /** the site's limits in force (src/limits/), for GET /api/v1/sites/{siteId}/limits */
  siteLimits?: SiteLimitsView;
  /** the site.yaml the daemon was started from and its restart: the setup page (setup.ts) */
  setup?: SetupHandle;
  /** owner sessions that outlive this app (sitegw run's restarts) */
  ownerSessions?: SessionStore;
}

/** how long answers still being written and WebSockets told 1001 get at a stop before their sockets are destroyed */
const STOP_GRACE_MS = 3000;

/** Refused requests worth an installer's eye: credentials or scope refused, limits hit, and any 4xx of the login and token pages. */
const REFUSED = new Set([401, 403, 408, 413, 429]);

function isRefusal(statusCode: number, path: string): boolean {
  return (
    REFUSED.has(statusCode) ||
    (statusCode >= 400 && statusCode < 500 && (path.startsWith('/oauth2/') || path === LOGIN_PATH))
  );
}

/** Builds the HTTP app without listening, so tests use app.inject() and main decides where to listen. */
export async function buildApp(opts: BuildOptions): Promise<FastifyInstance> {
  const timeouts = opts.limits && serverTimeouts(opts.limits);
  const requestLines = opts.logger ? opts.logger.isLevelEnabled('debug') : false;
  const app: FastifyInstance = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger as FastifyBaseLogger } : { logger: false }),
    ...(opts.https ? { https: { ...opts.https, ...timeouts?.node } } : timeouts ? { http: timeouts.node } : {}),
    ...timeouts?.fastify,
    // fastify's request lines carry the query string, where a careless client may put a code or
    // token; the line below logs the path only
    logController: new LogController({ disableRequestLogging: true }),
    // a child logger (with the request id) per request only where its request lines are written
    // (debug, below): at the unit's info level it cost ~10 µs a request (bench/telemetry-http.ts);
    // a 500 names its request itself (errors.ts)
    childLoggerFactory: (logger, bindings) => (requestLines ? logger.child(bindings) : logger),
    // partners on a LAN send small requests; anything larger is a mistake or an attack
    bodyLimit: 1 << 20,
    routerOptions: { maxParamLength: MAX_PATH_PARAM },
    frameworkErrors,
    clientErrorHandler,
  });
  const refusals = opts.refusals ?? new RefusalLog(opts.logger || silentLogger());
  // callback style for the same reason as the guard's hook (guard.ts)
  app.addHook('onResponse', (req, reply, done) => {
    // an answer below 400 is no refusal: at info nothing is written for it, and its path is not cut out
    if (reply.statusCode < 400 && !requestLines) return done();
    const path = req.url.split('?')[0]!;
    // refusals go to the bounded log alone, so a flood of them cannot fill the disk through this line
    if (isRefusal(reply.statusCode, path)) {
      refusals.note({ remote: req.ip, statusCode: reply.statusCode, method: req.method, path });
      return done();
    }
    // debug: a partner polling every second would write 86,400 lines a day to a Pi's SD card
    if (!requestLines) return done();
    req.log.debug(
      { method: req.method, path, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime), remote: req.ip },
      'request',
    );
    done();
  });
  // timeouts and malformed requests end before fastify sees a request: node answers (408, 400) and
  // closes; a peer that merely hung up (ECONNRESET) was not refused anything
  app.server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const statusCode = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code?.startsWith('HPE_') ? 400 : undefined;
    if (statusCode) refusals.note({ remote: socket.remoteAddress, statusCode, reason: err.code });
  });
  if (opts.limits) {
    const conns = new Connections(opts.limits, refusals, opts.https === undefined);
    conns.attach(app.server);
    gateRequests(app.server, conns, opts.limits, refusals);
    // a stop never waits for a peer: node's server.close() waits for every socket, upgraded or
    // refused ones included, and a peer that never hangs up held SIGTERM past systemd's timeout
    app.addHook('preClose', (done) => {
      conns.closeAll(STOP_GRACE_MS);
      done();
    });
    if (opts.ops) slotMetrics(opts.ops.metrics.registry, conns, app);
  }

  installErrorHandling(app);
  installJsonBody(app);
  installLenientQuery(app);
  // before any route: it refuses routes that do not declare who may call them
  const sessions = opts.ops
    ? new OwnerSessions({ db: opts.db, https: opts.https !== undefined, store: opts.ownerSessions })
    : undefined;
  installGuard(app, opts.auth, sessions && { check: (req) => sessions.check(req), loginPath: LOGIN_PATH });
  app.addSchema(TopologyNode);
  installValidators(app, [TopologyNode]);
  const scopes = Object.fromEntries(
    ALL_SCOPES.map((s) => [s, s === OPENID ? 'OpenID Connect: an id_token (granted in the code flow anyway)' : s]),
  );
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'sitegw Energy Site API',
        version: opts.version ?? '0.0.0',
        description: 'Energy Site Partner and Customer API served by the site gateway',
      },
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
    refResolver: {
      buildLocalReference: (json, _base, _frag, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  const deps: ApiDeps = { site: opts.site, db: opts.db, auth: opts.auth, control: opts.control };
  await app.register(oauthRoutes, deps);
  await app.register(sitesRoutes, deps);
  await app.register(devicesRoutes, deps);
  await app.register(publishToRoute, deps);
  await app.register(planRoutes, deps);
  const clocked = { ...deps, now: opts.now ?? Date.now };
  await app.register(tariffsRoutes, { ...clocked, quota: opts.tariffQuota });
  await app.register(savingsRoutes, clocked);
  await app.register(siteLimitsRoutes, { ...clocked, siteLimits: opts.siteLimits });
  if (opts.ops) {
    const ops = opts.ops;
    await app.register(healthRoutes, { health: ops.health });
    await app.register(metricsRoutes, { metrics: ops.metrics });
    await app.register(statusRoutes, {
      auth: opts.auth,
      sessions: sessions!,
      status: () => ops.status(),
      planCharts: () => ops.planCharts?.() ?? [],
      history: ops.history && ((view) => ops.history!(view)),
      https: opts.https !== undefined,
      releaseControl: opts.control && (() => opts.control!.releaseAll('owner (status page)')),
    });
    await app.register(setupRoutes, {
      setup: opts.setup,
      config: opts.site.config,
      https: opts.https !== undefined,
    });
    await app.register(setupClientsRoutes, {
      db: opts.db,
      devices: () => opts.site.config.devices.map((d) => d.id),
      https: opts.https !== undefined,
      scan: opts.setup && scanLink,
    });
  }
  // public and the same for every request: serialised once, so a flood of it costs no rebuilding,
  // and queued answers share the one buffer
  let openapi: Buffer | undefined;
  app.get('/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, async (_req, reply) => {
    openapi ??= Buffer.from(JSON.stringify(app.swagger()));
    return reply.type('application/json; charset=utf-8').send(openapi);
  });
  await app.ready();
  return app;
}
