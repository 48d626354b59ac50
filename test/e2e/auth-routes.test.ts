/**
 * Walks the running server's whole route table (collected by the guard's onRoute hook, so a
 * route added later is walked too) and proves that every route but the token service, the
 * authorization page, the health probe and the OpenAPI document refuses a request without a
 * valid token, and one with a token lacking the scope.
 */
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installGuard } from '../../src/api/http/guard.js';
import type { AuthService } from '../../src/auth/service.js';
import { basic, postForm } from '../support/auth.js';
import { demoSite } from '../support/demo.js';

/** What may be called without a token. */
const PUBLIC = new Set([
  'POST /oauth2/token',
  'GET /oauth2/authorize',
  'POST /oauth2/authorize',
  'GET /oauth2/jwks',
  'GET /openapi.json',
  'GET /health',
  'GET /healthz',
  'GET /login',
  'POST /login',
  'GET /status.css',
]);

describe('every route is guarded', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let planOnly: string;
  /** for the routes that plan.read opens: a token without it */
  let deviceOnly: string;

  beforeAll(async () => {
    demo = await demoSite({ speed: 60 });
    const c = demo.credentials;
    planOnly = (
      await postForm(
        c.tokenUrl,
        { grant_type: 'client_credentials', scope: 'svc/plan.read' },
        { authorization: basic(c.client.id, c.client.secret) },
      )
    ).body.access_token;
    deviceOnly = (
      await postForm(
        c.tokenUrl,
        { grant_type: 'client_credentials', scope: 'svc/device.read' },
        { authorization: basic(c.client.id, c.client.secret) },
      )
    ).body.access_token;
  });
  afterAll(async () => {
    await demo?.cleanup();
  });

  const guarded = () =>
    demo.daemon.app.routeTable.flatMap((r) => (typeof r.auth === 'object' ? [{ ...r, auth: r.auth }] : []));
  /** the installer's status page: the owner's session cookie, never a bearer token */
  const ownerOnly = () => demo.daemon.app.routeTable.filter((r) => r.auth === 'owner');
  const concrete = (url: string) =>
    url
      .replace(/:siteId/g, demo.siteId)
      .replace(/:synthId/g, 'inverter')
      .replace(/:(\w+)/g, 'x');
  const call = (method: string, url: string, authorization?: string) =>
    fetch(`${demo.url}${concrete(url)}`, {
      method,
      headers: {
        ...(authorization ? { authorization } : {}),
        ...(method === 'GET' || method === 'HEAD' ? {} : { 'content-type': 'application/json' }),
      },
      ...(method === 'GET' || method === 'HEAD' ? {} : { body: '{}' }),
      redirect: 'manual',
    });

  it('the table holds the API routes, and only the allowed ones are public', () => {
    const table = demo.daemon.app.routeTable;
    const keys = table.map((r) => `${r.method} ${r.url}`);
    for (const k of [
      'GET /api/v1/sites',
      'GET /api/v2/sites',
      'GET /api/v1/devices',
      'GET /api/v1/sites/:siteId/topology',
      'GET /api/v1/devices/:synthId/telemetry',
      'PATCH /api/v1/devices/:synthId',
    ]) {
      expect(keys).toContain(k);
    }
    const publicRoutes = table
      .filter((r) => r.auth === 'public')
      .map((r) => `${r.method === 'HEAD' ? 'GET' : r.method} ${r.url}`);
    expect(publicRoutes.filter((k) => !PUBLIC.has(k))).toEqual([]);
    expect(guarded().length).toBeGreaterThanOrEqual(7);
  });

  it('without a token: 401 with an RFC 6750 challenge on every guarded route, whatever the method', async () => {
    const answers = await Promise.all(
      guarded().map(async (r) => {
        const res = await call(r.method, r.url);
        return { route: `${r.method} ${r.url}`, status: res.status, challenge: res.headers.get('www-authenticate') };
      }),
    );
    expect(answers.filter((a) => a.status !== 401 || a.challenge !== 'Bearer realm="sitegw"')).toEqual([]);
  });

  it('status page routes refuse a request without the owner session, even with a valid token', async () => {
    expect(ownerOnly().map((r) => `${r.method} ${r.url}`)).toContain('GET /');
    const full = (
      await postForm(
        demo.credentials.tokenUrl,
        { grant_type: 'client_credentials' },
        { authorization: basic(demo.credentials.client.id, demo.credentials.client.secret) },
      )
    ).body.access_token;
    for (const r of ownerOnly()) {
      for (const authorization of [undefined, `Bearer ${full}`]) {
        const res = await call(r.method, r.url, authorization);
        expect({ route: `${r.method} ${r.url}`, status: res.status }).toEqual({
          route: `${r.method} ${r.url}`,
          status: 401,
        });
        expect(res.headers.get('www-authenticate')).toBeNull();
      }
    }
  });

  it('with a malformed or unknown token: 401 invalid_token on every guarded route', async () => {
    for (const authorization of ['Bearer', 'Bearer a b', 'Bearer sgw_at_unknown', 'Basic Zm9vOmJhcg==']) {
      for (const r of guarded()) {
        const res = await call(r.method, r.url, authorization);
        expect({ route: `${r.method} ${r.url}`, authorization, status: res.status }).toEqual({
          route: `${r.method} ${r.url}`,
          authorization,
          status: 401,
        });
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="sitegw"/);
      }
    }
  });

  it('with a valid token that lacks the scope: 403 insufficient_scope naming the scope each route needs', async () => {
    for (const r of guarded()) {
      const res = await call(r.method, r.url, `Bearer ${r.auth.permission === 'plan.read' ? deviceOnly : planOnly}`);
      expect({ route: `${r.method} ${r.url}`, status: res.status }).toEqual({
        route: `${r.method} ${r.url}`,
        status: 403,
      });
      expect(res.headers.get('www-authenticate')).toBe(
        `Bearer realm="sitegw", error="insufficient_scope", error_description="this call needs scope svc/${r.auth.permission}", scope="svc/${r.auth.permission}"`,
      );
    }
  });

  it('the public routes answer without a token', async () => {
    expect((await fetch(`${demo.url}/openapi.json`)).status).toBe(200);
    expect((await fetch(`${demo.url}/oauth2/jwks`)).status).toBe(200);
    expect(
      (await fetch(`${demo.url}/oauth2/authorize?client_id=${demo.credentials.client.id}&response_type=code`)).status,
    ).toBe(200);
  });

  it('a route that declares no auth is refused when it is registered', async () => {
    const app = Fastify();
    installGuard(app, {} as AuthService);
    expect(() => app.get('/open', async () => 'oops')).toThrow(/declares no config.auth/);
    app.get('/fine', { config: { auth: { permission: 'device.read' } } }, async () => 'ok');
    expect(app.routeTable.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /fine', 'HEAD /fine']);
  });

  it('the OpenAPI document names the scope of each guarded route', async () => {
    const doc = (await (await fetch(`${demo.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { security?: unknown }>>;
      components: { securitySchemes: Record<string, unknown> };
    };
    expect(doc.components.securitySchemes.oauth2).toBeDefined();
    expect(doc.paths['/api/v1/devices/{synthId}']!.patch!.security).toEqual([{ oauth2: ['svc/device.write'] }]);
    expect(doc.paths['/api/v1/sites']!.get!.security).toEqual([{ oauth2: ['svc/device.read'] }]);
    expect(doc.paths['/oauth2/token']!.post!.security).toBeUndefined();
  });
});
