/**
 * The installer's status page on the LAN, behind the site owner's login:
 *   GET  /login, POST /login   the owner's user name and password (public; failure-limited)
 *   POST /logout               ends the session
 *   GET  /                     the page (server-rendered)
 *   GET  /status/live          its sections, re-rendered, for /status.js
 *   GET  /status.json          the same facts as data, for scripts
 *   GET  /status/plan.json     the optimiser's plans with their prices and forecasts, for the chart
 *   GET  /status/history.json  energy, savings and SoC per hour or day from the buckets (?view=day|week|month)
 *   POST /control/self-consumption  every battery back to self-consumption, plans removed
 *   GET  /status.js, /status.css
 * Forms are checked against cross-site posting (Origin / Sec-Fetch-Site), the cookie is
 * SameSite=Strict, no token or password ever goes into a URL, and the pages may not be framed.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { refusalText } from '../../auth/attempts.js';
import type { AuthService } from '../../auth/service.js';
import { errorBody } from '../../core/errors.js';
import { HISTORY_VIEWS, type HistoryView, type SiteHistory } from '../../ops/history.js';
import type { StatusView } from '../../ops/status-view.js';
import type { PlanChart } from '../../optimiser/plan-chart.js';
import { SETUP_CSS } from './setup-page.js';
import { STATUS_CSS, STATUS_JS } from './status-assets.js';
import { PLAN_CHART_CSS, PLAN_CHART_JS } from './status-chart.js';
import { HISTORY_CSS, HISTORY_JS } from './status-history.js';
import { liveSections, loginPage, statusPage } from './status-page.js';
import type { OwnerSessions } from './status-session.js';

export const LOGIN_PATH = '/login';

export interface StatusDeps {
  auth: AuthService;
  sessions: OwnerSessions;
  status: () => StatusView;
  /** the optimiser's current plans (src/optimiser/plan-chart.ts); none without the optimiser */
  planCharts?: () => PlanChart[];
  /** the stored history for the page's charts (src/ops/history.ts) */
  history?: (view: HistoryView) => SiteHistory;
  https: boolean;
  /** the owner's button: every storage system back to self-consumption, plans removed */
  releaseControl?: () => void;
}

const FORM = 'application/x-www-form-urlencoded';
const OWNER = { auth: 'owner' } as const;
const PUBLIC = { auth: 'public' } as const;
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function pageHeaders(reply: FastifyReply): FastifyReply {
  return (
    reply
      .header('Content-Type', 'text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      .header('Content-Security-Policy', CSP)
      .header('X-Frame-Options', 'DENY')
      .header('X-Content-Type-Options', 'nosniff')
      // same-origin, not no-referrer: with no-referrer browsers send 'Origin: null' on our own form posts
      .header('Referrer-Policy', 'same-origin')
  );
}

/** A form post from a page of this gateway, or from a non-browser client (which sends neither header). */
export function sameOrigin(req: FastifyRequest, https: boolean): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  return origin === `${https ? 'https' : 'http'}://${req.headers.host ?? ''}`;
}

export const statusRoutes: FastifyPluginAsync<StatusDeps> = async (app, deps) => {
  const { auth, sessions } = deps;
  app.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: 4096 }, (_req, body, done) => {
    done(null, new URLSearchParams(body as string));
  });
  const form = (req: FastifyRequest): URLSearchParams =>
    req.body instanceof URLSearchParams ? req.body : new URLSearchParams();
  const crossSite = (reply: FastifyReply) =>
    reply.code(403).send(errorBody(403, 'CROSS_SITE_FORM', 'this form must be sent from the gateway’s own page'));

  app.get(LOGIN_PATH, { config: PUBLIC, schema: { hide: true } }, async (req, reply) => {
    if (sessions.check(req)) return reply.code(303).header('Location', '/').send();
    return pageHeaders(reply).send(loginPage());
  });

  app.post(LOGIN_PATH, { config: PUBLIC, schema: { hide: true } }, async (req, reply) => {
    if (!sameOrigin(req, deps.https)) return crossSite(reply);
    const f = form(req);
    const username = (f.get('username') ?? '').slice(0, 64);
    const result = await auth.ownerLogin(username, f.get('password') ?? '', req.ip);
    switch (result.kind) {
      case 'ok':
        return reply.code(303).header('Set-Cookie', sessions.create()).header('Location', '/').send();
      case 'failed':
        return pageHeaders(reply.code(401)).send(loginPage({ error: 'Wrong user name or password.', username }));
      case 'rate-limited':
        reply.header('Retry-After', String(result.retryAfter));
        return pageHeaders(reply.code(429)).send(loginPage({ error: refusalText(result), username }));
      case 'no-owner':
        return pageHeaders(reply.code(403)).send(
          loginPage({ error: 'No site owner is set on this gateway yet: run sitegw owner set-password.' }),
        );
    }
  });

  app.post('/logout', { config: OWNER, schema: { hide: true } }, async (req, reply) => {
    if (!sameOrigin(req, deps.https)) return crossSite(reply);
    return reply.code(303).header('Set-Cookie', sessions.destroy(req)).header('Location', LOGIN_PATH).send();
  });

  app.post('/control/self-consumption', { config: OWNER, schema: { hide: true } }, async (req, reply) => {
    if (!sameOrigin(req, deps.https)) return crossSite(reply);
    deps.releaseControl?.();
    return reply.code(303).header('Location', '/').send();
  });

  app.get('/', { config: OWNER, schema: { hide: true } }, async (_req, reply) =>
    pageHeaders(reply).send(statusPage(deps.status())),
  );

  app.get('/status/live', { config: OWNER, schema: { hide: true } }, async (_req, reply) => {
    const v = deps.status();
    return reply
      .header('Cache-Control', 'no-store')
      .send({ now: v.now, status: v.health.status, sections: liveSections(v) });
  });

  app.get('/status.json', { config: OWNER, schema: { hide: true } }, async (_req, reply) =>
    reply.header('Cache-Control', 'no-store').send(deps.status()),
  );

  app.get('/status/plan.json', { config: OWNER, schema: { hide: true } }, async (_req, reply) =>
    reply
      .header('Cache-Control', 'no-store')
      .send({ timezone: deps.status().site.timezone, plans: deps.planCharts?.() ?? [] }),
  );

  app.get<{ Querystring: { view?: string } }>(
    '/status/history.json',
    { config: OWNER, schema: { hide: true } },
    async (req, reply) => {
      const view = String(req.query.view ?? 'day');
      if (!(HISTORY_VIEWS as readonly string[]).includes(view))
        return reply
          .code(400)
          .send(
            errorBody(
              400,
              'INVALID_VIEW',
              `view must be one of ${HISTORY_VIEWS.join(', ')}, not '${view.slice(0, 40)}'`,
            ),
          );
      if (!deps.history)
        return reply.code(404).send(errorBody(404, 'ROUTE_NOT_FOUND', 'this gateway serves no history to its page'));
      return reply.header('Cache-Control', 'no-store').send(deps.history(view as HistoryView));
    },
  );

  app.get('/status.js', { config: OWNER, schema: { hide: true } }, async (_req, reply) =>
    reply
      .header('Content-Type', 'text/javascript; charset=utf-8')
      .header('Cache-Control', 'no-cache')
      .send(STATUS_JS + PLAN_CHART_JS + HISTORY_JS),
  );
  // public: the login page needs it, and it holds nothing but styles
  app.get('/status.css', { config: PUBLIC, schema: { hide: true } }, async (_req, reply) =>
    reply
      .header('Content-Type', 'text/css; charset=utf-8')
      .header('Cache-Control', 'no-cache')
      .send(STATUS_CSS + PLAN_CHART_CSS + HISTORY_CSS + SETUP_CSS),
  );
};
