/** The spec's conformance (test/conformance/spec.test.ts runs it), section by section: Authentication, Events, Errors, Limits and Versioning. */
import { beforeAll, describe, expect, it } from 'vitest';
import { basic, bearer, get, ownerTokens, partnerToken, postForm } from '../../support/auth.js';
import { getJson, waitFor } from '../../support/demo.js';
import { sensorsOf } from '../../support/topology.js';
import { StreamClient, tryUpgrade } from '../../support/ws-client.js';
import { api, coveredBy, demo, Q, tel, token, topology, wsUrl } from './context.js';

export function specAuthEvents(): void {
  describe('Authentication › Partner: client credentials', () => {
    it('1. POST /oauth2/token with query grant_type=client_credentials, a form content type and HTTP Basic', async () => {
      const r = await fetch(`${demo.credentials.tokenUrl}?grant_type=client_credentials`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: basic(demo.credentials.client.id, demo.credentials.client.secret),
        },
      });
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    });
    it('3. a new token is requested from the same endpoint when the old one expires', async () => {
      coveredBy(
        'e2e/auth-negative.test.ts',
        'an expired access token, a malformed one, an unknown one, and none at all',
      );
      const again = await partnerToken(demo.credentials);
      expect((await api('/api/v1/sites', again)).status).toBe(200);
    });
    it('every HTTP request carries Authorization: Bearer; without it 401', async () => {
      const r = await get(`${demo.url}/api/v1/sites`);
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
    });
  });

  describe('Authentication › Customer: authorization code flow', () => {
    it('1-3. authorize → 302 with code and the same state → exchange for access, id and refresh token', async () => {
      const body = await ownerTokens(demo.credentials, 'svc/device.read');
      expect(body.refresh_token).toBeTruthy();
      coveredBy(
        'e2e/auth-flows.test.ts',
        'customer: consent page in a browser, 302 with code and state, code + PKCE verifier for tokens',
      );
    });
    it('4. refresh: grant_type=refresh_token with client_id and refresh_token', async () => {
      const { refresh_token } = await ownerTokens(demo.credentials);
      const r = await postForm(
        demo.credentials.tokenUrl,
        { grant_type: 'refresh_token', client_id: demo.credentials.client.id, refresh_token },
        { authorization: basic(demo.credentials.client.id, demo.credentials.client.secret) },
      );
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    });
    it('token errors are RFC 6749 bodies', async () => {
      const r = await postForm(
        demo.credentials.tokenUrl,
        { grant_type: 'password' },
        { authorization: basic(demo.credentials.client.id, demo.credentials.client.secret) },
      );
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: 'unsupported_grant_type', error_description: expect.any(String) });
    });
  });

  describe('Authentication › Scopes', () => {
    it.each([
      ['svc/device.read', 'read device metadata and telemetry', '/api/v1/devices', 200],
      ['svc/plan.read', 'plan scopes are accepted and reserved (no plan endpoint)', '/api/v1/devices', 403],
    ])('%s: %s', async (scope, _what, path, status) => {
      const t = await partnerToken(demo.credentials, scope);
      expect((await api(path, t)).status).toBe(status);
    });
    it('svc/device.write: change devices; needed to set publishTo', () => {
      coveredBy('conformance/spec/endpoints.ts', '1. needs a customer access token with the write device scope');
    });
    it('svc/plan.write: accepted and reserved: a token can be issued with it', async () => {
      const t = await partnerToken(demo.credentials, 'svc/plan.write');
      expect((await api('/api/v1/devices', t)).status).toBe(403);
    });
  });

  describe('Events › Connection', () => {
    it('streams is required', async () => {
      expect(await tryUpgrade(wsUrl(''), bearer(token))).toMatchObject({
        open: false,
        status: 400,
        body: { code: 'MISSING_PARAMETER' },
      });
    });
    it.each([
      ['streams', 'telemetry-realtime,grid-events'],
      ['telemetryDevices', 'partner,customer'],
      ['telemetryInclude', 'default,energy'],
    ])('%s: comma-separated %s', async (name, value) => {
      const base = name === 'streams' ? '' : 'streams=telemetry-realtime&';
      expect(await tryUpgrade(wsUrl(`${base}${name}=${value}`), bearer(token))).toEqual({ open: true });
    });
    it('1. the connection carries the same Authorization header as HTTP', async () => {
      expect(await tryUpgrade(wsUrl('streams=grid-events'), {})).toMatchObject({ open: false, status: 401 });
    });
    it('2. a ping at least every 20 s keeps it alive; 3. a disconnect is handled by reconnecting', () => {
      coveredBy(
        'e2e/realtime.test.ts',
        'closes a client that sends no ping within the timeout, and keeps those that do',
      );
    });
  });

  describe('Events › Stream telemetry-realtime', () => {
    let m: any;
    beforeAll(async () => {
      const c = await StreamClient.connect(wsUrl('streams=telemetry-realtime&telemetryInclude=default'), token);
      try {
        m = await waitFor('a telemetry push', () => c.of('telemetry-realtime')[0], 60_000);
      } finally {
        c.close();
      }
    }, 70_000);
    it('stream: always telemetry-realtime', () => expect(m.stream).toBe('telemetry-realtime'));
    it('entries: telemetry entries, each with kind, deviceId and interval plus telemetry fields', () => {
      expect(m.entries.length).toBeGreaterThan(0);
      for (const x of m.entries) {
        expect(x).toMatchObject({ kind: x.deviceKind, deviceId: expect.any(String), interval: m.interval });
        expect(Object.keys(x).length).toBeGreaterThan(4);
      }
    });
    it('telemetryDevices: partner or customer, the class of the devices of this message', () =>
      expect(m.telemetryDevices).toBe('partner'));
    it('interval: the recently completed 15 minute period', () => {
      const [s, e] = m.interval.split('/').map(Date.parse);
      expect([e - s, s % Q]).toEqual([Q, 0]);
      expect(e).toBeLessThanOrEqual(demo.clock.now());
    });
    it('telemetryInclude: the field groups requested', () => expect(m.telemetryInclude).toEqual(['default']));
    it('1. sent every 15 minutes, clock-aligned, for the period just completed', () => {
      coveredBy(
        'e2e/realtime.test.ts',
        'pushes each completed bucket at its boundary, chunked, with every stream the partner may see',
      );
    });
    it('2. one interval can take several messages; 3. device classes in separate messages; 4. best effort', () => {
      coveredBy(
        'e2e/realtime.test.ts',
        'pushes each completed bucket at its boundary, chunked, with every stream the partner may see',
      );
      coveredBy(
        'e2e/realtime.test.ts',
        'a publishTo grant takes effect from the next push, in a customer-class message of its own',
      );
    });
    it('5. receiving customer telemetry: token, publishTo, telemetryDevices=customer', () => {
      coveredBy(
        'e2e/realtime.test.ts',
        'a publishTo grant takes effect from the next push, in a customer-class message of its own',
      );
    });
  });

  describe('Events › Stream grid-events', () => {
    let e: any;
    beforeAll(async () => {
      const c = await StreamClient.connect(wsUrl('streams=grid-events'), token);
      const post = (on: boolean) =>
        fetch(`${demo.simControl.url}/grid-outage`, { method: 'POST', body: JSON.stringify({ on }) });
      try {
        expect((await post(true)).status).toBe(200);
        e = await waitFor('a grid event', () => c.of('grid-events')[0], 30_000);
      } finally {
        await post(false);
        c.close();
      }
    }, 40_000);
    it('stream: always grid-events', () => expect(e.stream).toBe('grid-events'));
    it('deviceId: the meter, an id the topology lists as a sensor with a state channel', async () => {
      const sensor = sensorsOf(await topology()).find((x) => x.id === e.deviceId);
      expect(sensor, `topology lists ${e.deviceId}`).toBeDefined();
      expect(sensor!.node!.kind).toBe('connection-point');
      expect(sensor!.channels!.map((ch) => ch.id)).toContain('state');
    });
    it('timestamp: ISO 8601 UTC date-time', () => expect(new Date(e.timestamp).toISOString()).toBe(e.timestamp));
    it('deviceKind: always meter', () => expect(e.deviceKind).toBe('meter'));
    it('state: ok, not_present or unknown', () =>
      expect(e).toEqual({
        stream: 'grid-events',
        deviceId: e.deviceId,
        timestamp: e.timestamp,
        deviceKind: 'meter',
        state: 'not_present',
      }));
    it('1. an event is sent only when the status changes', () => {
      coveredBy(
        'e2e/realtime.test.ts',
        'sends exactly one not_present and one ok event near the switch times, and telemetry agrees',
      );
    });
    it('2. only for devices the partner has as a partner; customer-delegated devices get none', () => {
      coveredBy(
        'e2e/realtime.test.ts',
        'sends exactly one not_present and one ok event near the switch times, and telemetry agrees',
      );
    });
    it('3. status from before the connection: the topology gives the meter id, the telemetry endpoint its state', async () => {
      const { body } = await tel(e.deviceId, 'interval=2026-11-23T10:00:00Z/PT1H');
      expect(body.entries.map((x: { state: string }) => x.state)).toEqual(['ok', 'ok', 'ok', 'ok']);
    });
  });

  describe('Errors', () => {
    const keys = (b: object) => Object.keys(b).sort();
    it('401 GET dynamic tariff: not authenticated, the same body as the site list endpoint', async () => {
      const [t401, s401] = await Promise.all([api('/api/v1/dynamicTariffs/x', ''), api('/api/v1/sites', '')]);
      expect([t401.status, s401.status]).toEqual([401, 401]);
      expect(keys(t401.body)).toEqual(keys(s401.body));
      expect(t401.body).toMatchObject({ statusCode: 401, code: 'UNAUTHORIZED' });
    });
    it('404 GET dynamic tariff: tariff not found, the same body as the site endpoints', async () => {
      const [t404, s404] = await Promise.all([api('/api/v1/dynamicTariffs/x'), api('/api/v1/sites/x/topology')]);
      expect([t404.status, s404.status]).toEqual([404, 404]);
      expect(keys(t404.body)).toEqual(keys(s404.body));
      expect(keys(t404.body)).toEqual(['code', 'error', 'message', 'statusCode']);
    });
    it('telemetry for an id with no stream stored: 200 with an empty entries array', async () => {
      expect((await tel('nothing', 'interval=2026-11-23T10:00:00Z/PT1H')).body).toEqual({ entries: [] });
    });
  });

  describe('Limits', () => {
    it('page window: 7 days; nextToken moves back 7 days per page', () => {
      coveredBy(
        'conformance/spec/endpoints.ts',
        'interval: the first page is the latest 7 days inside it; each nextToken moves back 7 days until interval.start is reached',
      );
      coveredBy(
        'conformance/spec/endpoints.ts',
        'without interval: the previous 7 days, nextToken paginating backwards',
      );
    });
    it('ping interval: at least one ping every 20 seconds', () => {
      coveredBy('conformance/spec/auth-events.ts', '2. a ping at least every 20 s keeps it alive');
    });
    it('telemetry push schedule: every 15 minutes, clock-aligned', () => {
      coveredBy('conformance/spec/auth-events.ts', 'interval: the recently completed 15 minute period');
    });
    it('access token lifetime: expires_in 3600', () => {
      coveredBy('conformance/spec/resources.ts', 'expires_in: integer seconds, 3600 as documented');
    });
    it('default telemetry resolution: PT15M', () => {
      coveredBy('conformance/spec/endpoints.ts', 'resolution: PT15M is the default');
    });
  });

  describe('Versioning', () => {
    it('the version is part of the path: /api/v1 for most endpoints, /api/v2 for the site list and savings', async () => {
      const doc = (await getJson(`${demo.url}/openapi.json`)).body;
      const paths = Object.keys(doc.paths).filter((p) => p.startsWith('/api/'));
      expect(paths.filter((p) => p.startsWith('/api/v2/')).sort()).toEqual([
        '/api/v2/sites',
        '/api/v2/sites/{siteId}/savings',
      ]);
      expect(paths.every((p) => /^\/api\/v[12]\//.test(p))).toBe(true);
    });
  });
}
