import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, partnerToken } from '../support/auth.js';
import { demoSite } from '../support/demo.js';

describe('bad input gets a 4xx with the error body, never a 500', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let token: string;
  beforeAll(async () => {
    demo = await demoSite({ speed: 1 });
    token = await partnerToken(demo.credentials);
  });
  afterAll(async () => demo?.cleanup());

  const inject = (url: string) => demo.daemon.app.inject({ method: 'GET', url, headers: bearer(token) });
  const tel = (q: string) =>
    inject(`/api/v1/devices/${demo.siteId === '' ? 'x' : 'grid-meter__GRID_METER_DERIVED'}/telemetry?${q}`);

  const cases: [string, string, number, string, RegExp][] = [
    ['missing interval', '', 400, 'MISSING_PARAMETER', /interval.*start\/end/],
    ['garbage interval', 'interval=yesterday', 400, 'INVALID_INTERVAL', /start\/end, start\/duration or duration\/end/],
    ['end before start', 'interval=2026-11-02T00:00:00Z/2026-11-01T00:00:00Z', 400, 'INVALID_INTERVAL', /before|after/],
    ['end equal to start', 'interval=2026-11-02T00:00:00Z/2026-11-02T00:00:00Z', 400, 'INVALID_INTERVAL', /.+/],
    [
      'local time without zone',
      'interval=2026-11-01T00:00:00/2026-11-02T00:00:00',
      400,
      'INVALID_INTERVAL',
      /UTC|offset|Z/,
    ],
    ['two durations', 'interval=P1D/PT1H', 400, 'INVALID_INTERVAL', /.+/],
    ['impossible date', 'interval=2026-02-30T00:00:00Z/P1D', 400, 'INVALID_INTERVAL', /.+/],
    ['interval too long', 'interval=2020-01-01T00:00:00Z/2026-01-01T00:00:00Z', 400, 'INTERVAL_TOO_LONG', /.+/],
    [
      'unknown resolution',
      'interval=2026-11-01T00:00:00Z/P1D&resolution=PT5M',
      400,
      'INVALID_RESOLUTION',
      /PT15M.*PT1H.*P1D/,
    ],
    [
      'P1M is not a telemetry resolution',
      'interval=2026-11-01T00:00:00Z/P1D&resolution=P1M',
      400,
      'INVALID_RESOLUTION',
      /PT15M/,
    ],
    [
      'unknown include group',
      'interval=2026-11-01T00:00:00Z/P1D&include=default,volts',
      400,
      'INVALID_INCLUDE',
      /default.*energy/,
    ],
    ['empty include', 'interval=2026-11-01T00:00:00Z/P1D&include=', 400, 'INVALID_INCLUDE', /default.*energy/],
    // the same value twice is taken once (docs/api.md lenient input); two different ones cannot be
    [
      'interval repeated with different values',
      'interval=2026-11-01T00:00:00Z/P1D&interval=2026-11-02T00:00:00Z/P1D',
      400,
      'INVALID_PARAMETER',
      /interval/,
    ],
  ];

  for (const [name, q, status, code, message] of cases) {
    it(name, async () => {
      const res = await tel(q);
      expect(res.statusCode).toBe(status);
      const body = res.json();
      expect(body).toEqual({
        statusCode: status,
        error: expect.any(String),
        code,
        message: expect.stringMatching(message),
      });
    });
  }

  it('unknown site → 404 SITE_NOT_FOUND', async () => {
    const res = await inject('/api/v1/sites/elsewhere/topology');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      statusCode: 404,
      error: 'Not Found',
      code: 'SITE_NOT_FOUND',
      message: expect.stringContaining('elsewhere'),
    });
  });

  it('unknown route → 404 with the error body', async () => {
    const res = await inject('/api/v9/nothing');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ statusCode: 404, code: 'ROUTE_NOT_FOUND' });
  });

  it('an over-long id is refused without touching the store', async () => {
    const res = await inject(`/api/v1/devices/${'x'.repeat(500)}/telemetry?interval=2026-11-01T00:00:00Z/P1D`);
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
  });

  it('percent-encoded junk and control characters in parameters stay 4xx', async () => {
    for (const q of [
      'interval=%00%01',
      'interval=%E2%80%AE',
      `interval=${'9'.repeat(5000)}`,
      'interval=2026-11-01T00:00:00Z/P99999999D',
    ]) {
      const res = await tel(q);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().code).toMatch(/INVALID_INTERVAL|INTERVAL_TOO_LONG|INVALID_PARAMETER/);
    }
  });
});
