/**
 * Every documented status of every route in /openapi.json, produced on the real demo daemon over
 * real HTTP and checked with an OpenAPI validator (openapi-backend: the document against the
 * OpenAPI 3.0 schema at init, each request and each JSON response body against its operation).
 * The case table must cover exactly the documented (route, status) pairs, so a status the
 * document lists and the gateway never answers, or an answer it does not list, fails here.
 */
import { type Document, OpenAPIBackend, type Operation } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, bearer, clientToken, consent, customerTokens, ownerToken, partnerToken } from '../support/auth.js';
import { demoSite, getJson } from '../support/demo.js';
import { FLAT, siteConfig } from '../tariffs/fixture.js';
import { tariffApi } from '../tariffs/http.js';

type Demo = Awaited<ReturnType<typeof demoSite>>;

interface Answer {
  status: number;
  contentType: string;
  body: unknown;
}

interface Case {
  route: string;
  status: number;
  what: string;
  /** the request as the validator sees it (path with its real values, query, JSON or form body) */
  request: {
    method: string;
    path: string;
    query?: Record<string, string>;
    body?: unknown;
    headers?: Record<string, string>;
  };
  send(): Promise<Answer>;
}

let demo: Demo;
let backend: OpenAPIBackend;
let doc: Document;
let partner: string;
let owner: string;
let readOnly: string;
let refreshToken: string;
let tariffId: string;
const cases: Case[] = [];
/** the spec's partner token call, made before the failed sign-ins below lock the address out */
let specTokenCall: { status: number; headers: Record<string, string> };

/** The document's operations by path and method, as plain objects. */
const paths = (d: Document) =>
  d.paths as unknown as Record<string, Record<string, { operationId?: string; responses?: object }>>;

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  const contentType = res.headers.get('content-type') ?? '';
  return {
    status: res.status,
    contentType,
    // a 204 has no body at all, which the validator reads as null
    body: res.status === 204 ? null : contentType.startsWith('application/json') ? JSON.parse(text) : text,
  };
}

/** One case: `path` may carry a query string; `body` is JSON unless `form` is set. */
function add(
  route: string,
  status: number,
  what: string,
  opts: {
    path: string;
    token?: string;
    body?: unknown;
    form?: Record<string, string>;
    headers?: Record<string, string>;
  },
): void {
  const method = route.split(' ')[0]!;
  const url = new URL(opts.path, 'http://x');
  const headers: Record<string, string> = { ...(opts.token ? bearer(opts.token) : {}), ...opts.headers };
  let body: string | undefined;
  if (opts.form) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded';
    body = new URLSearchParams(opts.form).toString();
  } else if (opts.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  }
  cases.push({
    route,
    status,
    what,
    request: {
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body: opts.form ?? opts.body,
      headers,
    },
    send: async () =>
      answer(
        await fetch(`${demo.url}${opts.path}`, {
          method,
          headers,
          redirect: 'manual',
          ...(body !== undefined ? { body } : {}),
        }),
      ),
  });
}

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
  partner = await partnerToken(demo.credentials);
  owner = await ownerToken(demo.credentials);
  readOnly = await ownerToken(demo.credentials, 'svc/device.read');
  refreshToken = (await customerTokens(demo.credentials)).refresh_token;
  const planOnly = await partnerToken(demo.credentials, 'svc/plan.read');
  const site = demo.daemon.site.id;
  const c = demo.credentials;
  const tokenHeaders = {
    authorization: basic(c.client.id, c.client.secret),
    'content-type': 'application/x-www-form-urlencoded',
  };
  specTokenCall = {
    status: (
      await fetch(`${demo.url}/oauth2/token?grant_type=client_credentials`, {
        method: 'POST',
        headers: tokenHeaders,
        body: '',
      })
    ).status,
    headers: tokenHeaders,
  };

  add('GET /api/v1/sites', 200, 'the list', { path: '/api/v1/sites', token: partner });
  add('GET /api/v1/sites', 401, 'no token', { path: '/api/v1/sites' });
  add('GET /api/v1/sites', 403, 'plan scope only', { path: '/api/v1/sites', token: planOnly });
  add('GET /api/v2/sites', 200, 'the ids', { path: '/api/v2/sites', token: partner });
  add('GET /api/v2/sites', 401, 'bad token', { path: '/api/v2/sites', token: 'nope' });
  add('GET /api/v2/sites', 403, 'plan scope only', { path: '/api/v2/sites', token: planOnly });
  add('GET /api/v1/sites/{siteId}/topology', 200, 'expanded', {
    path: `/api/v1/sites/${site}/topology?compact=false`,
    token: partner,
  });
  add('GET /api/v1/sites/{siteId}/topology', 400, 'compact=maybe', {
    path: `/api/v1/sites/${site}/topology?compact=maybe`,
    token: partner,
  });
  add('GET /api/v1/sites/{siteId}/topology', 401, 'no token', { path: `/api/v1/sites/${site}/topology` });
  add('GET /api/v1/sites/{siteId}/topology', 403, 'plan scope only', {
    path: `/api/v1/sites/${site}/topology`,
    token: planOnly,
  });
  add('GET /api/v1/sites/{siteId}/topology', 404, 'unknown site', {
    path: '/api/v1/sites/elsewhere/topology',
    token: partner,
  });
  add('GET /api/v1/devices', 200, 'the list', { path: '/api/v1/devices', token: owner });
  add('GET /api/v1/devices', 401, 'no token', { path: '/api/v1/devices' });
  add('GET /api/v1/devices', 403, 'plan scope only', { path: '/api/v1/devices', token: planOnly });
  const tel = '/api/v1/devices/inverter__bb_agg/telemetry';
  add('GET /api/v1/devices/{synthId}/telemetry', 200, 'every channel of a PV stream (deviceKind pv)', {
    path: '/api/v1/devices/inverter__dcm/telemetry?interval=2026-11-23T20:00:00Z/PT3H&include=default,energy',
    token: partner,
  });
  add('GET /api/v1/devices/{synthId}/telemetry', 200, 'a battery by the day', {
    path: `${tel}?interval=2026-11-23T20:00:00Z/PT3H&resolution=P1D&include=default&include=energy`,
    token: partner,
  });
  add('GET /api/v1/devices/{synthId}/telemetry', 400, 'bad interval', {
    path: `${tel}?interval=yesterday`,
    token: partner,
  });
  add('GET /api/v1/devices/{synthId}/telemetry', 401, 'no token', {
    path: `${tel}?interval=2026-11-23T20:00:00Z/PT1H`,
  });
  add('GET /api/v1/devices/{synthId}/telemetry', 403, 'plan scope only', {
    path: `${tel}?interval=2026-11-23T20:00:00Z/PT1H`,
    token: planOnly,
  });
  const publish = (token: string | undefined, publishTo: unknown, path = '/api/v1/devices/inverter') => ({
    path,
    token,
    body: { publishTo },
  });
  add(
    'PATCH /api/v1/devices/{synthId}',
    200,
    'a publishTo list',
    publish(owner, [{ clientId: c.client.id, data: ['telemetry-realtime'] }]),
  );
  add(
    'PATCH /api/v1/devices/{synthId}',
    400,
    'an unknown client',
    publish(owner, [{ clientId: 'nobody', data: ['telemetry-realtime'] }]),
  );
  add('PATCH /api/v1/devices/{synthId}', 401, 'no token', publish(undefined, []));
  add('PATCH /api/v1/devices/{synthId}', 403, 'read scope only', publish(readOnly, []));
  add('PATCH /api/v1/devices/{synthId}', 404, 'an unknown device', publish(owner, [], '/api/v1/devices/nothing'));
  // plans: a slot a few minutes ahead of the demo's clock when the cases are sent
  const Q = 15 * 60_000;
  const at = Math.ceil((demo.clock.now() + 10 * 60_000) / Q) * Q;
  const plan = {
    slots: [
      { interval: `${new Date(at).toISOString()}/${new Date(at + Q).toISOString()}`, mode: 'charge', powerW: 1000 },
    ],
  };
  const planAt = (id: string) => `/api/v1/devices/${id}/plan`;
  add('PUT /api/v1/devices/{synthId}/plan', 200, 'a charge slot', {
    path: planAt('inverter'),
    token: partner,
    body: plan,
  });
  add('PUT /api/v1/devices/{synthId}/plan', 400, 'a slot off the quarter hours', {
    path: planAt('inverter'),
    token: partner,
    body: { slots: [{ ...plan.slots[0], interval: `${new Date(at + 60_000).toISOString()}/PT15M` }] },
  });
  add('PUT /api/v1/devices/{synthId}/plan', 401, 'no token', { path: planAt('inverter'), body: plan });
  add('PUT /api/v1/devices/{synthId}/plan', 403, 'plan.read only', {
    path: planAt('inverter'),
    token: planOnly,
    body: plan,
  });
  add('PUT /api/v1/devices/{synthId}/plan', 404, 'an unknown device', {
    path: planAt('nothing'),
    token: partner,
    body: plan,
  });
  add('PUT /api/v1/devices/{synthId}/plan', 412, 'a stale If-Match', {
    path: planAt('inverter'),
    token: partner,
    body: plan,
    headers: { 'if-match': '"stale"' },
  });
  add('GET /api/v1/devices/{synthId}/plan', 200, 'the plan', { path: planAt('inverter__bb_agg'), token: planOnly });
  add('GET /api/v1/devices/{synthId}/plan', 400, 'a meter, no storage system', {
    path: planAt('house-meter'),
    token: partner,
  });
  add('GET /api/v1/devices/{synthId}/plan', 401, 'no token', { path: planAt('inverter') });
  add('GET /api/v1/devices/{synthId}/plan', 403, 'read scope only', { path: planAt('inverter'), token: readOnly });
  add('GET /api/v1/devices/{synthId}/plan', 404, 'an unknown device', { path: planAt('nothing'), token: partner });
  add('DELETE /api/v1/devices/{synthId}/plan', 204, 'removed', { path: planAt('inverter'), token: partner });
  add('DELETE /api/v1/devices/{synthId}/plan', 400, 'a meter, no storage system', {
    path: planAt('house-meter'),
    token: partner,
  });
  add('DELETE /api/v1/devices/{synthId}/plan', 401, 'no token', { path: planAt('inverter') });
  add('DELETE /api/v1/devices/{synthId}/plan', 403, 'plan.read only', { path: planAt('inverter'), token: planOnly });
  add('DELETE /api/v1/devices/{synthId}/plan', 404, 'no plan any more', { path: planAt('inverter'), token: partner });
  const tariff = {
    name: 'Spot',
    currency: 'EUR',
    timezone: 'Europe/Berlin',
    kind: 'both',
    values: [{ interval: '2026-11-23T10:00:00Z/PT1H', importPrice: 0.3, exportPrice: 0.07 }],
  };
  add('POST /api/v1/dynamicTariffs', 201, 'a tariff', { path: '/api/v1/dynamicTariffs', token: owner, body: tariff });
  add('POST /api/v1/dynamicTariffs', 400, 'no name', {
    path: '/api/v1/dynamicTariffs',
    token: owner,
    body: { ...tariff, name: '' },
  });
  add('POST /api/v1/dynamicTariffs', 401, 'no token', { path: '/api/v1/dynamicTariffs', body: tariff });
  add('POST /api/v1/dynamicTariffs', 403, 'read scope only', {
    path: '/api/v1/dynamicTariffs',
    token: readOnly,
    body: tariff,
  });
  const created = await fetch(`${demo.url}/api/v1/dynamicTariffs`, {
    method: 'POST',
    headers: { ...bearer(owner), 'content-type': 'application/json' },
    body: JSON.stringify(tariff),
  });
  tariffId = ((await created.json()) as { tariffId: string }).tariffId;
  const values = { values: [{ interval: '2026-11-23T11:00:00Z/PT1H', importPrice: 0.31, exportPrice: 0.07 }] };
  add('PATCH /api/v1/dynamicTariffs/{tariffId}', 200, 'one more value', {
    path: `/api/v1/dynamicTariffs/${tariffId}`,
    token: owner,
    body: values,
  });
  add('PATCH /api/v1/dynamicTariffs/{tariffId}', 400, 'no values', {
    path: `/api/v1/dynamicTariffs/${tariffId}`,
    token: owner,
    body: {},
  });
  add('PATCH /api/v1/dynamicTariffs/{tariffId}', 401, 'no token', {
    path: `/api/v1/dynamicTariffs/${tariffId}`,
    body: values,
  });
  add('PATCH /api/v1/dynamicTariffs/{tariffId}', 403, 'read scope only', {
    path: `/api/v1/dynamicTariffs/${tariffId}`,
    token: readOnly,
    body: values,
  });
  add('PATCH /api/v1/dynamicTariffs/{tariffId}', 404, 'unknown tariff', {
    path: '/api/v1/dynamicTariffs/none',
    token: owner,
    body: values,
  });
  // a client of its own for the quota answers, so the cases above do not count against it
  const quotaClient = await clientToken(demo, 'openapi-quota', [], ['svc/device.read', 'svc/device.write']);
  const hours = (n: number, from = 0) =>
    Array.from({ length: n }, (_, i) => ({
      interval: `2026-11-22T${String(from + i).padStart(2, '0')}:00:00Z/PT1H`,
      importPrice: 0.3,
      exportPrice: 0.07,
    }));
  add('POST /api/v1/dynamicTariffs', 409, 'more values than a tariff may hold', {
    path: '/api/v1/dynamicTariffs',
    token: quotaClient,
    body: { ...tariff, values: hours(5) },
  });
  add('PATCH /api/v1/dynamicTariffs/{tariffId}', 409, 'more values than a tariff may hold', {
    path: `/api/v1/dynamicTariffs/${tariffId}`,
    token: owner,
    body: { values: hours(4, 12) },
  });
  // 8 values stored today by this client: the next write is over its daily quota
  for (const from of [0, 4]) {
    const r = await fetch(`${demo.url}/api/v1/dynamicTariffs`, {
      method: 'POST',
      headers: { ...bearer(quotaClient), 'content-type': 'application/json' },
      body: JSON.stringify({ ...tariff, values: hours(4, from) }),
    });
    if (r.status !== 201) throw new Error(`quota set-up: ${r.status} ${await r.text()}`);
  }
  const full = (
    (await (
      await fetch(`${demo.url}/api/v1/dynamicTariffs`, {
        method: 'POST',
        headers: { ...bearer(quotaClient), 'content-type': 'application/json' },
        body: JSON.stringify({ ...tariff, values: [] }),
      })
    ).json()) as { tariffId: string }
  ).tariffId;
  add('POST /api/v1/dynamicTariffs', 429, 'over the daily quota of stored values', {
    path: '/api/v1/dynamicTariffs',
    token: quotaClient,
    body: tariff,
  });
  add('PATCH /api/v1/dynamicTariffs/{tariffId}', 429, 'over the daily quota of stored values', {
    path: `/api/v1/dynamicTariffs/${full}`,
    token: quotaClient,
    body: values,
  });
  add('GET /api/v1/dynamicTariffs/{tariffId}', 200, 'a page', {
    path: `/api/v1/dynamicTariffs/${tariffId}?interval=2026-11-20T00:00:00Z/2026-11-24T00:00:00Z`,
    token: partner,
  });
  add('GET /api/v1/dynamicTariffs/{tariffId}', 400, 'a forged nextToken', {
    path: `/api/v1/dynamicTariffs/${tariffId}?nextToken=forged`,
    token: partner,
  });
  add('GET /api/v1/dynamicTariffs/{tariffId}', 401, 'no token', { path: `/api/v1/dynamicTariffs/${tariffId}` });
  add('GET /api/v1/dynamicTariffs/{tariffId}', 403, 'plan scope only', {
    path: `/api/v1/dynamicTariffs/${tariffId}`,
    token: planOnly,
  });
  add('GET /api/v1/dynamicTariffs/{tariffId}', 404, 'unknown tariff', {
    path: '/api/v1/dynamicTariffs/none',
    token: partner,
  });
  const sav = `/api/v2/sites/${site}/savings`;
  add('GET /api/v2/sites/{siteId}/savings', 200, 'by the hour', {
    path: `${sav}?interval=2026-11-23T20:00:00Z/PT3H&resolution=PT1H`,
    token: partner,
  });
  add('GET /api/v2/sites/{siteId}/savings', 400, 'no resolution', {
    path: `${sav}?interval=2026-11-23T20:00:00Z/PT3H`,
    token: partner,
  });
  add('GET /api/v2/sites/{siteId}/savings', 401, 'no token', {
    path: `${sav}?interval=2026-11-23T20:00:00Z/PT3H&resolution=PT1H`,
  });
  add('GET /api/v2/sites/{siteId}/savings', 403, 'plan scope only', {
    path: `${sav}?interval=2026-11-23T20:00:00Z/PT3H&resolution=PT1H`,
    token: planOnly,
  });
  add('GET /api/v2/sites/{siteId}/savings', 404, 'unknown site', {
    path: `/api/v2/sites/elsewhere/savings?interval=2026-11-23T20:00:00Z/PT3H&resolution=PT1H`,
    token: partner,
  });
  add('GET /metrics', 200, 'the exposition', { path: '/metrics', token: partner });
  add('GET /metrics', 401, 'no token', { path: '/metrics' });
  add('GET /metrics', 403, 'plan scope only', { path: '/metrics', token: planOnly });
  add('GET /healthz', 200, 'healthy', { path: '/healthz' });
  add('GET /oauth2/jwks', 200, 'the keys', { path: '/oauth2/jwks' });
  const basicAuth = { authorization: basic(c.client.id, c.client.secret) };
  add('POST /oauth2/token', 200, 'client credentials', {
    path: '/oauth2/token',
    form: { grant_type: 'client_credentials' },
    headers: basicAuth,
  });
  add('POST /oauth2/token', 400, 'an unsupported grant', {
    path: '/oauth2/token',
    form: { grant_type: 'password' },
    headers: basicAuth,
  });
  add('POST /oauth2/token', 413, 'a 20 kB form', {
    path: '/oauth2/token',
    form: { grant_type: 'client_credentials', scope: 'x'.repeat(20_000) },
    headers: basicAuth,
  });
  add('POST /oauth2/token', 415, 'an XML body', {
    path: '/oauth2/token',
    body: '<grant_type/>',
    headers: { ...basicAuth, 'content-type': 'application/xml' },
  });
  const request = { response_type: 'code', client_id: c.client.id, state: 's', scope: 'svc/device.read' };
  add('GET /oauth2/authorize', 200, 'the sign-in page', { path: `/oauth2/authorize?${new URLSearchParams(request)}` });
  add('GET /oauth2/authorize', 400, 'no client_id', { path: '/oauth2/authorize?response_type=code' });
  const signIn = (fields: Record<string, string>) => ({ path: '/oauth2/authorize', form: { ...request, ...fields } });
  add(
    'POST /oauth2/authorize',
    200,
    'signed in: the consent page',
    signIn({ username: c.owner.username, password: c.owner.password, decision: 'sign-in' }),
  );
  add('POST /oauth2/authorize', 400, 'no decision', signIn({ username: c.owner.username, password: c.owner.password }));
  // the failed attempts come last: two of them lock the address out (maxFailedAttempts: 2)
  add('POST /oauth2/token', 401, 'a wrong client secret', {
    path: '/oauth2/token',
    form: { grant_type: 'client_credentials' },
    headers: { authorization: basic(c.client.id, 'wrong') },
  });
  add(
    'POST /oauth2/authorize',
    401,
    'a wrong password',
    signIn({ username: c.owner.username, password: 'wrong', decision: 'sign-in' }),
  );
  add('POST /oauth2/token', 429, 'after too many failures', {
    path: '/oauth2/token',
    form: { grant_type: 'client_credentials' },
    headers: { authorization: basic(c.client.id, 'wrong') },
  });
  add(
    'POST /oauth2/authorize',
    429,
    'after too many failures',
    signIn({ username: c.owner.username, password: 'wrong', decision: 'sign-in' }),
  );
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
