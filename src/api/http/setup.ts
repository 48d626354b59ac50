/**
 * Setup in the browser, for the site owner signed in to the status page (the same session and
 * the same refusal of cross-site posts):
 *   GET  /setup              the page: site, tariff, uplink, Home Assistant, control and limits
 *   GET  /setup/config.json  the config in force (secrets left out) and which start of the daemon serves it
 *   POST /setup/config       {changes: [{path, value}]}: checked as check-config checks, written with
 *                            comments kept and a backup (src/setup/edit.ts), then the daemon restarts
 *   GET  /setup.js
 * The page waits for the restart by asking config.json until another start answers.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import type { SiteConfig } from '../../config/types.js';
import { errorBody } from '../../core/errors.js';
import { type ConfigChange, EDITABLE_SECTIONS, editSiteYaml } from '../../setup/edit.js';
import { SETUP_JS, setupPage } from './setup-page.js';
import { pageHeaders, sameOrigin } from './status.js';

/** What `sitegw run` hands the daemon: the file it read, and how to start again with it. */
export interface SetupHandle {
  file: string;
  /** called once the answer to an accepted change is sent */
  restart: () => void;
}

export interface SetupDeps {
  /** none in the demo and in tests that build a config in memory: there is no file to change */
  setup?: SetupHandle;
  config: SiteConfig;
  https: boolean;
}

const OWNER = { auth: 'owner' } as const;

/** The editable sections as the daemon runs them, without passwords (the page never shows one). */
export function configInForce(config: SiteConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of EDITABLE_SECTIONS) {
    const v = (config as unknown as Record<string, unknown>)[k];
    if (v === undefined) continue;
    out[k] = JSON.parse(JSON.stringify(v), (key, value) => (key === 'password' ? undefined : value));
  }
  return out;
}

export const setupRoutes: FastifyPluginAsync<SetupDeps> = async (app, deps) => {
  // tells one start of the daemon from the next: the page waits until it changes
  const started = { id: randomUUID(), at: new Date().toISOString() };
  let accepted = false;
  let busy = false;

  app.get('/setup', { config: OWNER, schema: { hide: true } }, async (_req, reply) =>
    pageHeaders(reply).send(setupPage({ site: deps.config.site.name, available: deps.setup !== undefined })),
  );

  app.get('/setup.js', { config: OWNER, schema: { hide: true } }, async (_req, reply) =>
    reply.header('Content-Type', 'text/javascript; charset=utf-8').header('Cache-Control', 'no-cache').send(SETUP_JS),
  );

  app.get('/setup/config.json', { config: OWNER, schema: { hide: true } }, async (_req, reply) =>
    reply.header('Cache-Control', 'no-store').send({
      start: started,
      file: deps.setup?.file ?? null,
      editable: EDITABLE_SECTIONS,
      config: configInForce(deps.config),
    }),
  );

  app.post<{ Body: unknown }>('/setup/config', { config: OWNER, schema: { hide: true } }, async (req, reply) => {
    if (!sameOrigin(req, deps.https))
      return reply
        .code(403)
        .send(errorBody(403, 'CROSS_SITE_FORM', 'this change must be sent from the gateway’s own page'));
    if (!deps.setup)
      return reply
        .code(409)
        .send(
          errorBody(
            409,
            'SETUP_UNAVAILABLE',
            'this gateway was not started from a site.yaml (the demo builds its site in memory): there is no file to change',
          ),
        );
    if (accepted || busy)
      return reply
        .code(409)
        .send(
          errorBody(409, 'SETUP_RESTARTING', 'a change is being applied: wait for the restart, then send this again'),
        );
    const changes = (req.body as { changes?: unknown } | undefined)?.changes;
    if (!Array.isArray(changes) || changes.some((c) => c === null || typeof c !== 'object'))
      return reply
        .code(400)
        .send(errorBody(400, 'INVALID_BODY', 'send {"changes": [{"path": ["site", "name"], "value": "…"}, …]}'));
    busy = true;
    try {
      const r = await editSiteYaml(deps.setup.file, changes as ConfigChange[]);
      if (!r.ok) {
        const status = r.code === 'CONFIG_NOT_WRITABLE' || r.code === 'CONFIG_UNREADABLE' ? 409 : 400;
        return reply.code(status).send({ ...errorBody(status, r.code, r.message), errors: r.errors });
      }
      accepted = true;
      const setup = deps.setup;
      // after the answer has gone out: the restart closes this server
      reply.raw.once('close', () => setup.restart());
      return reply.code(202).send({ restarting: true, backup: r.backup, start: started });
    } finally {
      busy = false;
    }
  });
};
