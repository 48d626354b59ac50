/** GET /api/v2/sites/{siteId}/savings over the real app: the body, the daemon clock, who sees what, 409. */
import { afterEach, describe, expect, it } from 'vitest';
import { FLAT, siteConfig } from './fixture.js';
import { type TariffApi, tariffApi } from './http.js';

let api: TariffApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const URL = '/api/v2/sites/home/savings?interval=2026-06-01T10:00:00Z/PT1H&resolution=PT15M';

describe('savings endpoint', () => {
  it('answers currency, entries and skipped; buckets after the daemon clock are not counted', async () => {
    api = await tariffApi(siteConfig(FLAT), Date.parse('2026-06-01T10:31:00Z'));
    api.both('2026-06-01T10:00:00Z', 2000, 400); // 0.5*0.30 - 0.1*0.30 = 0.12
    api.both('2026-06-01T10:15:00Z', 1200, -800); // 0.3*0.30 + 0.2*0.08 = 0.106
    // 10:30 is still open at 10:31
    const r = await api.req('GET', URL);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({
      currency: 'EUR',
      entries: [
        { interval: '2026-06-01T10:00:00Z/2026-06-01T10:15:00Z', savings: 0.12 },
        { interval: '2026-06-01T10:15:00Z/2026-06-01T10:30:00Z', savings: 0.106 },
      ],
      skipped: { noData: 0, noPrice: 0 },
    });
    api.clock.now = Date.parse('2026-06-01T11:00:00Z');
    expect((await api.req('GET', URL)).json().skipped).toEqual({ noData: 2, noPrice: 0 });
  });

  it('a partner without the meters sees a site without data', async () => {
    api = await tariffApi(siteConfig(FLAT), Date.parse('2026-06-02T00:00:00Z'));
    api.both('2026-06-01T10:00:00Z', 2000, 400);
    const r = await api.req('GET', URL, undefined, api.tokens.inverterOnly);
    expect(r.json()).toEqual({ currency: 'EUR', entries: [], skipped: { noData: 4, noPrice: 0 } });
  });

  it('409 with the error body when the site has no tariff', async () => {
    api = await tariffApi(siteConfig(), Date.parse('2026-06-02T00:00:00Z'));
    const r = await api.req('GET', URL);
    expect(r.statusCode).toBe(409);
    expect(r.json()).toMatchObject({ statusCode: 409, error: 'Conflict', code: 'SITE_TARIFF_UNAVAILABLE' });
  });

  it('the OpenAPI document describes skipped, 409 and the tariff routes', async () => {
    api = await tariffApi(siteConfig(FLAT), 0);
    const doc = (await api.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const savings = doc.paths['/api/v2/sites/{siteId}/savings'].get;
    expect(Object.keys(savings.responses['200'].content['application/json'].schema.properties)).toEqual([
      'currency',
      'entries',
      'skipped',
    ]);
    expect(savings.responses['409']).toBeDefined();
    // one body per kind: the prices its values carry are required by that kind
    const bodies = doc.paths['/api/v1/dynamicTariffs'].post.requestBody.content['application/json'].schema.anyOf;
    for (const b of bodies) expect(b.required).toEqual(['name', 'currency', 'timezone', 'kind']);
    expect(
      bodies.map((b: { properties: { kind: { enum: string[] }; values: { items: { required: string[] } } } }) => [
        b.properties.kind.enum,
        b.properties.values.items.required,
      ]),
    ).toEqual([
      [['import'], ['interval', 'importPrice']],
      [['export'], ['interval', 'exportPrice']],
      [['both'], ['interval', 'importPrice', 'exportPrice']],
    ]);
    expect(savings.parameters.find((p: { name: string }) => p.name === 'resolution')).toMatchObject({
      required: true,
      schema: { enum: ['PT15M', 'PT1H', 'P1D', 'P1M'] },
    });
    expect(doc.paths['/api/v1/dynamicTariffs/{tariffId}'].patch.security).toEqual([{ oauth2: ['svc/device.write'] }]);
  });
});
