/**
 * The first-run server: what `sitegw run` serves while site.yaml is the package's placeholder
 * (src/setup/first-run.ts, docs/install.md "Setup in the browser"). Nothing else runs: no poll,
 * no API, no uplink. Every request that changes anything carries the setup code.
 *   GET  /, /onboarding        the page        GET /onboarding.js, /status.css
 *   POST /onboarding/scan      {code, target | rtu, units, taken}: a Modbus TCP bus or a serial line
 *                              scanned (src/setup/scan.ts): nothing holds the line yet
 *   POST /onboarding/site      {code, owner, site, devices}: site.yaml written as check-config checks it,
 *                              the owner's password set, then the gateway starts on it (202)
 * A /login asked meanwhile answers 503, so the page knows the gateway is not up yet.
 */
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { ClientError } from '../../auth/clients.js';
import { OWNER_NAME, PASSWORD_MIN, setOwnerPassword } from '../../auth/owner.js';
import type { SiteConfig } from '../../config/types.js';
import { errorBody } from '../../core/errors.js';
import { replaceSiteYaml } from '../../setup/edit.js';
import { type FirstRunPlace, firstSiteText, proposedOf, sameCode } from '../../setup/first-run.js';
import { rtuLink, ScanRequestError, scanLink } from '../../setup/scan.js';
import { openDatabase } from '../../store/db.js';
import { ONBOARDING_JS, onboardingPage } from './onboarding-page.js';
import { STATUS_CSS } from './status-assets.js';

export interface OnboardingOptions {
  file: string;
  code: string;
  codeFile: string;
  place: FirstRunPlace;
  https?: { cert: string; key: string };
  /** called once the answer to an accepted site is sent: `sitegw run` starts the gateway on it */
  done: (config: SiteConfig) => void;
  /**
   * ms on a clock that never steps, for the lock (core/clock.ts mono()): on the wall clock an NTP
   * step back locked the page for as long as the step, one forward ended the lock early. Tests
   * hand in their own.
   */
  mono?: () => number;
}

/** wrong codes in a row that lock the page: every code, the right one too, is refused for LOCK_MS */
export const WRONG_CODES = 10;
export const LOCK_MS = 60_000;

const slug = (name: string) =>
  name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40) || 'home';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});

export async function buildOnboarding(o: OnboardingOptions): Promise<FastifyInstance> {
  const app = Fastify({ bodyLimit: 256 * 1024, ...(o.https ? { https: o.https } : {}) });
  const mono = o.mono ?? (() => performance.now());
  let wrong = 0;
  let lockedUntil = Number.NEGATIVE_INFINITY;
  let accepted = false;

  const locked = () => ({
    status: 429,
    retryAfter: Math.max(1, Math.ceil((lockedUntil - mono()) / 1000)),
    body: errorBody(
      429,
      'SETUP_CODE_LOCKED',
      `${WRONG_CODES} wrong setup codes in a row: every code is refused for a minute, then the one in ${o.codeFile} works again`,
    ),
  });

  /** null when the code is right, else the answer sent */
  const refusedCode = (code: unknown) => {
    // while locked the code is not even compared: a guess that happens to be right wins nothing
    if (mono() < lockedUntil) return locked();
    if (sameCode(code, o.code)) {
      wrong = 0;
      return null;
    }
    if (++wrong >= WRONG_CODES) {
      wrong = 0;
      lockedUntil = mono() + LOCK_MS;
      return locked();
    }
    return {
      status: 403,
      body: errorBody(
        403,
        'SETUP_CODE_WRONG',
        `the setup code is not the one in ${o.codeFile} (sudo cat it on the gateway)`,
      ),
    };
  };

  const refuse = (reply: FastifyReply, r: { status: number; retryAfter?: number; body: unknown }) => {
    if (r.retryAfter !== undefined) reply.header('Retry-After', String(r.retryAfter));
    return reply.code(r.status).send(r.body);
  };

  app.setErrorHandler((e, _req, reply) => {
    const err = e as { statusCode?: number; message: string };
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    reply.code(status).send(errorBody(status, status === 500 ? 'INTERNAL' : 'INVALID_BODY', err.message));
  });

  const page = (_req: unknown, reply: import('fastify').FastifyReply) =>
    reply
      .header('Content-Type', 'text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      .header('Content-Security-Policy', "default-src 'self'")
      .send(onboardingPage({ codeFile: o.codeFile }));
  app.get('/', page);
  app.get('/onboarding', page);
  app.get('/onboarding.js', (_req, reply) =>
    reply.header('Content-Type', 'text/javascript; charset=utf-8').send(ONBOARDING_JS),
  );
  app.get('/status.css', (_req, reply) => reply.header('Content-Type', 'text/css; charset=utf-8').send(STATUS_CSS));
  app.get('/login', (_req, reply) =>
    reply.code(503).send(errorBody(503, 'NOT_CONFIGURED', 'this gateway is not set up yet: open / to set it up')),
  );

  app.post('/onboarding/scan', async (req, reply) => {
    const b = obj(req.body);
    const refused = refusedCode(b.code);
    if (refused) return refuse(reply, refused);
    const rtu = b.rtu === undefined ? undefined : obj(b.rtu);
    if ((typeof b.target !== 'string' && !rtu) || typeof b.units !== 'string')
      return reply
        .code(400)
        .send(
          errorBody(
            400,
            'INVALID_BODY',
            'send {"code", "target": "HOST[:PORT]", "units": "1-3"} or {"code", "rtu": {"device": "/dev/ttyUSB0", "baudRate": 9600, "parity": "none"}, "units": "1-3"}',
          ),
        );
    const taken = Array.isArray(b.taken) ? b.taken.filter((x): x is string => typeof x === 'string') : [];
    try {
      return { devices: await scanLink(rtu ? rtuLink(rtu) : (b.target as string), b.units, new Set(taken)) };
    } catch (e) {
      if (e instanceof ScanRequestError) return reply.code(400).send(errorBody(400, 'SCAN_REFUSED', e.message));
      const what = rtu ? String(rtu.device) : String(b.target);
      return reply.code(502).send(errorBody(502, 'SCAN_FAILED', `the scan of ${what} failed: ${(e as Error).message}`));
    }
  });

  app.post('/onboarding/site', async (req, reply) => {
    const b = obj(req.body);
    const refused = refusedCode(b.code);
    if (refused) return refuse(reply, refused);
    if (accepted)
      return reply
        .code(409)
        .send(errorBody(409, 'SETUP_RESTARTING', 'the site is written and the gateway is starting'));
    const owner = obj(b.owner);
    const site = obj(b.site);
    const username = typeof owner.username === 'string' ? owner.username : '';
    const password = typeof owner.password === 'string' ? owner.password : '';
    if (!OWNER_NAME.test(username))
      return reply
        .code(400)
        .send(errorBody(400, 'OWNER_REFUSED', 'the user name takes 1 to 64 letters, digits and . _ @ -'));
    if ([...password].length < PASSWORD_MIN)
      return reply
        .code(400)
        .send(errorBody(400, 'OWNER_REFUSED', `the password needs at least ${PASSWORD_MIN} characters`));
    const devices = (Array.isArray(b.devices) ? b.devices : []).map(obj);
    if (devices.length === 0)
      return reply
        .code(400)
        .send(
          errorBody(400, 'NO_DEVICES', 'pick at least one device: scan a bus, or write site.yaml with sitegw setup'),
        );
    const text = firstSiteText(
      {
        siteId: slug(String(site.siteName ?? '')),
        siteName: String(site.siteName ?? ''),
        timezone: String(site.timezone ?? ''),
        currency: String(site.currency ?? ''),
        latitude: Number(site.latitude),
        longitude: Number(site.longitude),
      },
      o.place,
      devices.map((d) => proposedOf(obj(d.device) as never, typeof d.note === 'string' ? d.note : '')),
      ['the first-run page'],
      new Date().toISOString(),
    );
    // the same load and checks as check-config; a refusal leaves the placeholder as it was
    const r = await replaceSiteYaml(o.file, text);
    if (!r.ok) {
      const status = r.code === 'CONFIG_NOT_WRITABLE' || r.code === 'CONFIG_UNREADABLE' ? 409 : 400;
      return reply.code(status).send({ ...errorBody(status, r.code, r.message), errors: r.errors });
    }
    const db = openDatabase(`${r.config.dataDir}/sitegw.db`);
    try {
      await setOwnerPassword(db, username, password, Date.now());
    } catch (e) {
      if (!(e instanceof ClientError)) throw e;
      return reply.code(400).send(errorBody(400, 'OWNER_REFUSED', e.message));
    } finally {
      db.close();
    }
    accepted = true;
    reply.raw.once('close', () => o.done(r.config));
    return reply.code(202).send({ starting: true, backup: r.backup });
  });
  return app;
}
