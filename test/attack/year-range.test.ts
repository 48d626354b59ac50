/**
 * Instants outside the years 0000-9999 are refused where they come in, over real HTTP against the
 * daemon: in a tariff value, a tariff page's interval and a telemetry interval, each a 400 that
 * names the allowed range, and nothing is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attackLog } from '../support/attack-log.js';
import { basic, bearer, postForm } from '../support/auth.js';
import { demoSite } from '../support/demo.js';

const RANGE = '0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z';
const OUTSIDE = [
  '9999-12-31T23:45:00Z/PT30M',
  '+010001-01-01T00:00:00Z/PT15M',
  '-000001-12-31T23:45:00Z/PT15M',
  '10000-01-01T00:00:00Z/PT15M',
];

/** every line the daemons of this file log, scanned for secrets at its end (support/attack-log.ts) */
const { log } = attackLog();

describe('instants outside the years 0000-9999', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let token: string;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${demo.url}${path}`, {
      method,
      headers: { ...bearer(token), ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    demo = await demoSite({
      log,
      speed: 60,
    });
    const c = demo.credentials;
    token = (
      await postForm(
        c.tokenUrl,
        { grant_type: 'client_credentials' },
        { authorization: basic(c.client.id, c.client.secret) },
      )
    ).body.access_token;
  });
  afterAll(async () => {
    await demo?.cleanup();
  });

  it('in a tariff value: 400 naming the value and the range, no tariff stored', async () => {
    for (const interval of OUTSIDE) {
      const r = await call('POST', '/api/v1/dynamicTariffs', {
        name: 'x',
        currency: 'EUR',
        timezone: 'UTC',
        kind: 'import',
        values: [{ interval, importPrice: 0.3 }],
      });
      expect(r.status, interval).toBe(400);
      expect(r.body.code).toBe('INVALID_BODY');
      expect(r.body.message).toContain('values[0].interval');
      expect(r.body.message).toContain(RANGE);
    }
    expect(demo.daemon.ctx.db.prepare('SELECT count(*) FROM tariffs').pluck().get()).toBe(0);
  });

  it('in the interval of a tariff page and of telemetry: 400 INVALID_INTERVAL naming the range', async () => {
    const id = (
      await call('POST', '/api/v1/dynamicTariffs', { name: 'x', currency: 'EUR', timezone: 'UTC', kind: 'import' })
    ).body.tariffId as string;
    const device = [...demo.daemon.site.devices.keys()][0]!;
    for (const interval of OUTSIDE) {
      for (const path of [`/api/v1/dynamicTariffs/${id}`, `/api/v1/devices/${device}/telemetry`]) {
        const r = await call('GET', `${path}?interval=${encodeURIComponent(interval)}`);
        expect(r.status, `${path} ${interval}`).toBe(400);
        expect(r.body.code).toBe('INVALID_INTERVAL');
        expect(r.body.message).toContain(RANGE);
      }
    }
  });
});
