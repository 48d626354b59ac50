/**
 * Every documented status of every route in /openapi.json, produced on the real demo daemon over
 * real HTTP and checked with an OpenAPI validator (openapi-backend: the document against the
 * OpenAPI 3.0 schema at init, each request and each JSON response body against its operation).
 * The case table must cover exactly the documented (route, status) pairs, so a status the
 * document lists and the gateway never answers, or an answer it does not list, fails here.
 */
import { type Document, OpenAPIBackend, type Operation } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, bearer, consent, ownerToken, partnerToken } from '../support/auth.js';
import { demoSite, getJson } from '../support/demo.js';
import { FLAT, siteConfig } from '../tariffs/fixture.js';
import { tariffApi } from '../tariffs/http.js';
import { type Answer, answer, type Case, type Demo, routeCases, type Table } from './openapi/cases.js';

let demo: Demo;
let backend: OpenAPIBackend;
let doc: Document;
let partner: string;
let owner: string;
let refreshToken: string;
let specTokenCall: Table['specTokenCall'];
let cases: Case[];

/** The document's operations by path and method, as plain objects. */
const paths = (d: Document) =>
  d.paths as unknown as Record<string, Record<string, { operationId?: string; responses?: object }>>;

beforeAll(async () => {
  demo = await demoSite({
    speed: 1,
    start: Date.parse('2026-11-24T01:00:00Z'),
    history: 'PT6H',
    configure: (c) => {
      // two failed attempts per address: the rate-limit answers are reachable in a few requests
      c.auth.maxFailedAttempts = 2;
      // tariff quotas small enough that their 409 and 429 take a few writes (the other cases store 3 values)
      c.limits.dynamicTariffs = { ...c.limits.dynamicTariffs, maxValuesPerTariff: 4, maxValuesPerClientPerDay: 8 };
    },
  });
  doc = (await getJson(`${demo.url}/openapi.json`)).body;
  // openapi-backend needs an operationId per operation; the document leaves them out
  const withIds = structuredClone(doc);
  for (const [p, ops] of Object.entries(paths(withIds)))
    for (const [m, op] of Object.entries(ops)) op.operationId = `${m.toUpperCase()} ${p}`;
  backend = new OpenAPIBackend({ definition: withIds, strict: true, validate: true, quick: false });
  await backend.init();
  ({ cases, partner, owner, refreshToken, specTokenCall } = await routeCases(demo));
}, 120_000);
afterAll(async () => demo?.cleanup());

/** Statuses that need a daemon in another state: each has its own test below. */
const SEPARATE = [
  'GET /healthz 503',
  'GET /api/v2/sites/{siteId}/savings 409',
  'POST /oauth2/authorize 302',
  'POST /oauth2/authorize 403',
  'POST /oauth2/token 503',
  'PUT /api/v1/devices/{synthId}/plan 409',
  'PATCH /api/v1/devices/{synthId} 409',
];

/** The operation and documented response for a case, or a failure naming what is missing. */
function documented(route: string, status: number): { op: Operation; media: string[] } {
  const op = backend.getOperation(route);
  expect(op, `${route} is in /openapi.json`).toBeDefined();
  const res = op!.responses?.[String(status)] as { content?: Record<string, unknown> } | undefined;
  expect(res, `${route} documents ${status}`).toBeDefined();
  return { op: op!, media: Object.keys(res!.content ?? {}) };
}

function check(c: Case, a: Answer): void {
  const label = `${c.route} → ${c.status} (${c.what})`;
  expect(a.status, `${label}: ${JSON.stringify(a.body).slice(0, 300)}`).toBe(c.status);
  const { op, media } = documented(c.route, a.status);
  if (media.length === 0) expect(a.contentType === '' || a.status === 302, label).toBe(true);
  else
    expect(
      media.some((m) => a.contentType.replace(/\s/g, '').startsWith(m.replace(/\s/g, ''))),
      `${label}: ${a.contentType} not in ${media.join(', ')}`,
    ).toBe(true);
  const result = backend.validateResponse(a.body, op, a.status);
  expect(result.errors ?? [], label).toEqual([]);
}

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3.0 document (checked by openapi-backend at init)', () => {
    expect(doc.openapi).toMatch(/^3\.0\./);
    expect(backend.initialized).toBe(true);
  });

  it('every response says what it is: none is left as "Default Response"', () => {
    const vague = Object.entries(paths(doc)).flatMap(([p, ops]) =>
      Object.entries(ops).flatMap(([m, op]) =>
        Object.entries((op.responses ?? {}) as Record<string, { description?: string }>)
          .filter(([, r]) => !r.description || r.description === 'Default Response')
          .map(([s]) => `${m.toUpperCase()} ${p} ${s}`),
      ),
    );
    expect(vague).toEqual([]);
  });

  it('every documented status of every route has a case below, and no case answers an undocumented one', () => {
    const documentedPairs = Object.entries(paths(doc)).flatMap(([p, ops]) =>
      Object.entries(ops).flatMap(([m, op]) =>
        Object.keys(op.responses ?? {}).map((s) => `${m.toUpperCase()} ${p} ${s}`),
      ),
    );
    const covered = new Set([...cases.map((c) => `${c.route} ${c.status}`), ...SEPARATE]);
    expect(
      documentedPairs.filter((d) => !covered.has(d)).concat([...covered].filter((c) => !documentedPairs.includes(c))),
    ).toEqual([]);
  });

  it('the requests of the successful cases are valid for their operation', () => {
    for (const c of cases.filter((x) => x.status < 400)) {
      const r = backend.validateRequest({ ...c.request, headers: { ...c.request.headers } }, c.route);
      expect(r.errors ?? [], `${c.route} (${c.what})`).toEqual([]);
    }
  });

  it('POST /oauth2/authorize 302 (a decision) and 403 (a gateway without an owner)', async () => {
    const c = demo.credentials;
    const { answer: decided } = await consent({
      apiUrl: c.apiUrl,
      query: { response_type: 'code', client_id: c.client.id, state: 's' },
      ...c.owner,
    });
    expect(decided.status).toBe(302);
    expect(decided.headers.get('location')).toMatch(/[?&]code=/);
    documented('POST /oauth2/authorize', 302);
    // the demo always has an owner; the app of a fresh gateway has none yet
    const api = await tariffApi(siteConfig(FLAT), 0);
    try {
      const r = await api.app.inject({
        method: 'POST',
        url: '/oauth2/authorize',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'response_type=code&client_id=writer&username=owner&password=x&decision=sign-in',
      });
      expect(r.statusCode).toBe(403);
      const { media } = documented('POST /oauth2/authorize', 403);
      expect(
        media.some((m) => String(r.headers['content-type']).replace(/\s/g, '').startsWith(m.replace(/\s/g, ''))),
      ).toBe(true);
    } finally {
      await api.close();
    }
  });

  // in the table's order: the failed sign-ins at its end lock the address out, so this runs last
  // before the cases: their failed attempts lock the demo client out of the token endpoint
  it('POST /oauth2/token 503 when a refresh token cannot be spent: the database takes no writes', async () => {
    const c = demo.credentials;
    // SQLITE_READONLY on every write: a storage fault, as a full disk's SQLITE_FULL is
    demo.daemon.ctx.db.pragma('query_only = ON');
    try {
      const a = await answer(
        await fetch(`${demo.url}/oauth2/token`, {
          method: 'POST',
          headers: {
            authorization: basic(c.client.id, c.client.secret),
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
        }),
      );
      expect(a.status).toBe(503);
      const { op } = documented('POST /oauth2/token', 503);
      expect(backend.validateResponse(a.body, op, 503).errors ?? []).toEqual([]);
      expect(a.body).toMatchObject({ error: 'temporarily_unavailable' });
    } finally {
      demo.daemon.ctx.db.pragma('query_only = OFF');
      demo.daemon.ctx.ops.health.noteWrite();
    }
  });

  it('every documented status of every route: the answer validates against its operation', async () => {
    for (const c of cases) check(c, await c.send());
  });

  it('GET /healthz 503 while the main loop is unhealthy', async () => {
    demo.daemon.ctx.ops.health.noteWrite(new Error('disk I/O error'));
    try {
      const a = await answer(await fetch(`${demo.url}/healthz`));
      expect(a.status).toBe(503);
      const { op } = documented('GET /healthz', 503);
      expect(backend.validateResponse(a.body, op, 503).errors ?? []).toEqual([]);
    } finally {
      demo.daemon.ctx.ops.health.noteWrite();
    }
  });

  it('PUT /api/v1/devices/{synthId}/plan and PATCH operationMode 409 on a gateway with control off', async () => {
    const off = await demoSite({ speed: 1, configure: (c) => void (c.control.enabled = false) });
    try {
      const token = await partnerToken(off.credentials);
      const Q = 15 * 60_000;
      const at = Math.ceil((off.clock.now() + 10 * 60_000) / Q) * Q;
      const res = await fetch(`${off.url}/api/v1/devices/inverter/plan`, {
        method: 'PUT',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        body: JSON.stringify({
          slots: [{ interval: `${new Date(at).toISOString()}/${new Date(at + Q).toISOString()}`, mode: 'hold' }],
        }),
      });
      const a = await answer(res);
      expect(a.status).toBe(409);
      const { op } = documented('PUT /api/v1/devices/{synthId}/plan', 409);
      expect(backend.validateResponse(a.body, op, 409).errors ?? []).toEqual([]);
      // with control on, the optimiser runs and `optimise` is accepted: control off is this 409
      const mode = await answer(
        await fetch(`${off.url}/api/v1/devices/inverter`, {
          method: 'PATCH',
          headers: { ...bearer(await ownerToken(off.credentials)), 'content-type': 'application/json' },
          body: JSON.stringify({ operationMode: 'optimise' }),
        }),
      );
      expect(mode.status).toBe(409);
      expect((mode.body as { code: string }).code).toBe('CONTROL_DISABLED');
      const patch = documented('PATCH /api/v1/devices/{synthId}', 409);
      expect(backend.validateResponse(mode.body, patch.op, 409).errors ?? []).toEqual([]);
    } finally {
      await off.cleanup();
    }
  });

  it('GET /api/v2/sites/{siteId}/savings 409 on a site without a tariff', async () => {
    const api = await tariffApi(siteConfig(), Date.parse('2026-06-02T00:00:00Z'));
    try {
      const r = await api.req('GET', '/api/v2/sites/home/savings?interval=2026-06-01T10:00:00Z/PT1H&resolution=PT1H');
      const { op } = documented('GET /api/v2/sites/{siteId}/savings', 409);
      expect(r.statusCode).toBe(409);
      expect(backend.validateResponse(r.json(), op, 409).errors ?? []).toEqual([]);
    } finally {
      await api.close();
    }
  });
});

describe('the document is as strict as the server, and the spec’s own calls fit it', () => {
  const site = () => demo.daemon.site.id;
  /** requests the server refuses with 400: the document must refuse them too */
  const refused = (): {
    route: string;
    what: string;
    path: string;
    query?: Record<string, string>;
    body?: unknown;
  }[] => [
    {
      route: 'GET /api/v2/sites/{siteId}/savings',
      what: 'no resolution',
      path: `/api/v2/sites/${site()}/savings`,
      query: { interval: '2026-11-23T20:00:00Z/PT3H' },
    },
    {
      route: 'GET /api/v1/devices/{synthId}/telemetry',
      what: 'a resolution the docs do not list',
      path: '/api/v1/devices/inverter__bb_agg/telemetry',
      query: { interval: '2026-11-23T20:00:00Z/PT3H', resolution: 'PT60M' },
    },
    {
      route: 'GET /api/v1/devices/{synthId}/telemetry',
      what: 'an interval without "/"',
      path: '/api/v1/devices/inverter__bb_agg/telemetry',
      query: { interval: 'yesterday' },
    },
    {
      route: 'GET /api/v1/devices/{synthId}/telemetry',
      what: 'an interval without a UTC offset',
      path: '/api/v1/devices/inverter__bb_agg/telemetry',
      query: { interval: '2026-11-23T20:00:00/PT3H' },
    },
    {
      route: 'POST /api/v1/dynamicTariffs',
      what: 'an import tariff whose value has only an exportPrice',
      path: '/api/v1/dynamicTariffs',
      body: {
        name: 'x',
        currency: 'EUR',
        timezone: 'Europe/Berlin',
        kind: 'import',
        values: [{ interval: '2026-11-23T10:00:00Z/PT1H', exportPrice: 0.07 }],
      },
    },
  ];

  it('every request the server refuses with 400 here, the document refuses too', async () => {
    for (const r of refused()) {
      const url = `${demo.url}${r.path}?${new URLSearchParams(r.query ?? {})}`;
      const res = await fetch(url, {
        method: r.route.split(' ')[0],
        headers: { ...bearer(owner), ...(r.body ? { 'content-type': 'application/json' } : {}) },
        ...(r.body ? { body: JSON.stringify(r.body) } : {}),
      });
      expect(res.status, `${r.route} ${r.what}: the server`).toBe(400);
      const v = backend.validateRequest(
        {
          method: r.route.split(' ')[0]!,
          path: r.path,
          query: r.query ?? {},
          body: r.body,
          headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
        },
        r.route,
      );
      expect(v.errors ?? [], `${r.route} ${r.what}: the document`).not.toEqual([]);
    }
  });

  it('the spec’s partner token call (grant_type in the query, an empty form) is a valid request of the document', async () => {
    const { status, headers } = specTokenCall;
    expect(status).toBe(200);
    const v = backend.validateRequest(
      { method: 'POST', path: '/oauth2/token', query: { grant_type: 'client_credentials' }, body: {}, headers },
      'POST /oauth2/token',
    );
    expect(v.errors ?? []).toEqual([]);
  });

  it('id_token is described as the gateway issues it: code and refresh grants, openid or not', () => {
    const op = backend.getOperation('POST /oauth2/token')!;
    const res = op.responses!['200'] as { content: Record<string, { schema: { properties: Record<string, any> } }> };
    const d: string = res.content['application/json']!.schema.properties.id_token.description;
    expect(d).toMatch(/refresh_token/);
    expect(d).not.toMatch(/openid scope only/);
  });
});

describe('framework answers in the error body', () => {
  it('a path id over 200 characters: 400 INVALID_PARAMETER, not fastify’s 414', async () => {
    const res = await fetch(`${demo.url}/api/v1/sites/${'a'.repeat(201)}/topology`, { headers: bearer(partner) });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'INVALID_PARAMETER' });
  });

  it('a bad percent-encoding: 400 INVALID_PARAMETER whose message does not repeat the URL or its query', async () => {
    const res = await fetch(`${demo.url}/api/v1/devices/%zz/telemetry?interval=secret-looking-value`, {
      headers: bearer(partner),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; message: string };
    expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'INVALID_PARAMETER' });
    expect(body.message).not.toMatch(/secret-looking-value|%zz|telemetry/);
  });

  it('a method a route does not have: 405 METHOD_NOT_ALLOWED with Allow; an unknown path stays 404', async () => {
    const res = await fetch(`${demo.url}/api/v1/sites`, { method: 'DELETE', headers: bearer(partner) });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(await res.json()).toMatchObject({ statusCode: 405, code: 'METHOD_NOT_ALLOWED' });
    const tariff = await fetch(`${demo.url}/api/v1/dynamicTariffs/abc`, { method: 'PUT', headers: bearer(owner) });
    expect(tariff.status).toBe(405);
    expect(tariff.headers.get('allow')).toBe('GET, HEAD, PATCH');
    const none = await fetch(`${demo.url}/api/v1/nothing`, { method: 'DELETE', headers: bearer(partner) });
    expect(none.status).toBe(404);
    expect(await none.json()).toMatchObject({ code: 'ROUTE_NOT_FOUND' });
  });
});
