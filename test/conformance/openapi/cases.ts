/**
 * The case table of test/conformance/openapi.test.ts: one request per documented (route, status)
 * pair, made on the demo the test starts. Order matters: the failed sign-ins come last, since two
 * of them lock the address out.
 */
import { basic, bearer, clientToken, customerTokens, ownerToken, partnerToken } from '../../support/auth.js';
import type { demoSite } from '../../support/demo.js';

export type Demo = Awaited<ReturnType<typeof demoSite>>;

export interface Answer {
  status: number;
  contentType: string;
  body: unknown;
}

export interface Case {
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

/** What a test reads after the table is made: the tokens it used and the spec's own token call. */
export interface Table {
  cases: Case[];
  partner: string;
  owner: string;
  refreshToken: string;
  /** the spec's partner token call, made before the failed sign-ins below lock the address out */
  specTokenCall: { status: number; headers: Record<string, string> };
}

export async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  const contentType = res.headers.get('content-type') ?? '';
  return {
    status: res.status,
    contentType,
    // a 204 has no body at all, which the validator reads as null
    body: res.status === 204 ? null : contentType.startsWith('application/json') ? JSON.parse(text) : text,
  };
}

export async function routeCases(demo: Demo): Promise<Table> {
  const cases: Case[] = [];
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
  const partner = await partnerToken(demo.credentials);
  const owner = await ownerToken(demo.credentials);
  const readOnly = await ownerToken(demo.credentials, 'svc/device.read');
  const refreshToken = (await customerTokens(demo.credentials)).refresh_token;
  const planOnly = await partnerToken(demo.credentials, 'svc/plan.read');
  const site = demo.daemon.site.id;
  const c = demo.credentials;
  const tokenHeaders = {
    authorization: basic(c.client.id, c.client.secret),
    'content-type': 'application/x-www-form-urlencoded',
  };
  const specTokenCall = {
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
  // site limits: a 0 W export slot of 40 s, a little ahead of the demo's clock, at a whole second
  const limitsAt = `/api/v1/sites/${site}/limits`;
  const ls = Math.ceil((demo.clock.now() + 5 * 60_000) / 1000) * 1000;
  const limitsBody = {
    slots: [{ interval: `${new Date(ls).toISOString()}/${new Date(ls + 40_000).toISOString()}`, exportW: 0 }],
  };
  add('PUT /api/v1/sites/{siteId}/limits', 200, 'a 0 W export slot', {
    path: limitsAt,
    token: partner,
    body: limitsBody,
  });
  add('PUT /api/v1/sites/{siteId}/limits', 400, 'a slot without a limit', {
    path: limitsAt,
    token: partner,
    body: { slots: [{ interval: limitsBody.slots[0]!.interval }] },
  });
  add('PUT /api/v1/sites/{siteId}/limits', 401, 'no token', { path: limitsAt, body: limitsBody });
  add('PUT /api/v1/sites/{siteId}/limits', 403, 'plan.read only', {
    path: limitsAt,
    token: planOnly,
    body: limitsBody,
  });
  add('PUT /api/v1/sites/{siteId}/limits', 404, 'another site', {
    path: '/api/v1/sites/elsewhere/limits',
    token: partner,
    body: limitsBody,
  });
  add('PUT /api/v1/sites/{siteId}/limits', 412, 'a stale If-Match', {
    path: limitsAt,
    token: partner,
    body: limitsBody,
    headers: { 'if-match': '"stale"' },
  });
  add('GET /api/v1/sites/{siteId}/limits', 200, 'the limits in force and the schedule', {
    path: limitsAt,
    token: planOnly,
  });
  add('GET /api/v1/sites/{siteId}/limits', 400, 'a site id over 200 characters', {
    path: `/api/v1/sites/${'x'.repeat(201)}/limits`,
    token: partner,
  });
  add('GET /api/v1/sites/{siteId}/limits', 401, 'no token', { path: limitsAt });
  add('GET /api/v1/sites/{siteId}/limits', 403, 'read scope only', { path: limitsAt, token: readOnly });
  add('GET /api/v1/sites/{siteId}/limits', 404, 'another site', {
    path: '/api/v1/sites/elsewhere/limits',
    token: partner,
  });
  add('DELETE /api/v1/sites/{siteId}/limits', 204, 'removed', { path: limitsAt, token: partner });
  add('DELETE /api/v1/sites/{siteId}/limits', 400, 'a site id over 200 characters', {
    path: `/api/v1/sites/${'x'.repeat(201)}/limits`,
    token: partner,
  });
  add('DELETE /api/v1/sites/{siteId}/limits', 401, 'no token', { path: limitsAt });
  add('DELETE /api/v1/sites/{siteId}/limits', 403, 'plan.read only', { path: limitsAt, token: planOnly });
  add('DELETE /api/v1/sites/{siteId}/limits', 404, 'no schedule any more', { path: limitsAt, token: partner });
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
  const tariffId = ((await created.json()) as { tariffId: string }).tariffId;
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
  return { cases, partner, owner, refreshToken, specTokenCall };
}
