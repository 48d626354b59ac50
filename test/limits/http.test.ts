/**
 * PUT / GET / DELETE /api/v1/sites/{siteId}/limits (src/api/http/site-limits.ts) on the real app
 * (guard included) over a real SQLite file: the schedule written, the limits in force with their
 * sources, the named 400s, the partner's grant of every inverter, ETag / If-Match.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/http/app.js';
import { addClient } from '../../src/auth/clients.js';
import { AuthService } from '../../src/auth/service.js';
import { silentLogger } from '../../src/core/log.js';
import { scheduleSource } from '../../src/limits/schedule.js';
import { SiteLimits } from '../../src/limits/sources.js';
import { Site } from '../../src/site/site.js';
import { openDatabase } from '../../src/store/db.js';
import { siteConfig } from '../tariffs/fixture.js';

const T0 = Date.parse('2026-06-21T10:00:00Z');
const dir = mkdtempSync(join(tmpdir(), 'sitegw-limits-http-'));
const config = siteConfig(['limits:', '  exportW: 5000']);
const db = openDatabase(join(dir, 'sitegw.db'));
const site = new Site(config);
const clock = { now: T0 };
const limits = new SiteLimits();
limits.add({ name: 'site.yaml', at: () => ({ exportW: 5000 }) });
limits.add(scheduleSource(db));
const auth = new AuthService({ db, config: config.auth, dataDir: dir, siteId: site.id, log: silentLogger() });
let app: Awaited<ReturnType<typeof buildApp>>;
const tokens: Record<string, string> = {};

const iso = (ms: number) => new Date(ms).toISOString();
const slot = (fromS: number, toS: number, w: Record<string, number>) => ({
  interval: `${iso(T0 + fromS * 1000)}/${iso(T0 + toS * 1000)}`,
  ...w,
});

beforeAll(async () => {
  auth.start();
  app = await buildApp({
    site,
    db,
    auth,
    now: () => clock.now,
    tariffQuota: config.limits.dynamicTariffs,
    siteLimits: { inForce: () => limits.inForce(clock.now) },
  });
  const token = async (id: string, scopes: string[], devices: string[]) => {
    const { secret } = await addClient(db, { id, scopes: scopes.map((s) => `svc/${s}`), devices }, Date.now());
    const res = await app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: {
        authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: 'grant_type=client_credentials',
    });
    return (res.json() as { access_token: string }).access_token;
  };
  tokens.all = await token('all', ['plan.write', 'plan.read'], ['inv', 'gm', 'hm']);
  tokens.meterOnly = await token('meter-only', ['plan.write', 'plan.read'], ['gm']);
  tokens.reader = await token('reader', ['plan.read'], ['inv', 'gm', 'hm']);
});
afterAll(async () => {
  await app.close();
  auth.stop();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const req = (
  method: 'GET' | 'PUT' | 'DELETE',
  body?: unknown,
  token = tokens.all,
  headers: Record<string, string> = {},
  siteId = 'home',
) =>
  app.inject({
    method,
    url: `/api/v1/sites/${siteId}/limits`,
    headers: { authorization: `Bearer ${token}`, ...headers },
    ...(body !== undefined ? { payload: body as object } : {}),
  });

describe('the limit schedule over HTTP', () => {
  it('a PUT stores it whole; GET shows the limits in force with their sources, and the slots', async () => {
    const put = await req('PUT', {
      slots: [slot(7, 47, { exportW: 0 }), slot(100, 200, { importW: 3000, generationW: 4000 })],
    });
    expect(put.statusCode).toBe(200);
    const etag = put.headers.etag as string;
    expect(etag).toMatch(/^"/);
    clock.now = T0 + 10_000;
    const get = await req('GET', undefined, tokens.reader);
    expect(get.statusCode).toBe(200);
    expect(get.headers.etag).toBe(etag);
    expect(get.json()).toEqual({
      siteId: 'home',
      inForce: { exportW: 0, importW: null, generationW: null, sources: { exportW: 'schedule' } },
      source: 'partner:all',
      slots: [
        { interval: '2026-06-21T10:00:07Z/2026-06-21T10:00:47Z', exportW: 0 },
        { interval: '2026-06-21T10:01:40Z/2026-06-21T10:03:20Z', importW: 3000, generationW: 4000 },
      ],
    });
    // between the slots: site.yaml's 5000 W
    clock.now = T0 + 60_000;
    expect((await req('GET')).json().inForce).toMatchObject({ exportW: 5000, sources: { exportW: 'site.yaml' } });
    // a stale If-Match is refused, the stored ETag is taken
    const stale = await req('PUT', { slots: [] }, tokens.all, { 'if-match': '"other"' });
    expect([stale.statusCode, stale.json().code]).toEqual([412, 'LIMITS_CHANGED']);
    expect((await req('PUT', { slots: [] }, tokens.all, { 'if-match': etag })).statusCode).toBe(200);
    clock.now = T0;
  });

  it.each([
    [
      'not a whole second',
      { slots: [{ interval: `${iso(T0 + 1500)}/${iso(T0 + 9000)}`, exportW: 0 }] },
      'SLOT_NOT_ALIGNED',
    ],
    ['no limit', { slots: [{ interval: `${iso(T0 + 1000)}/${iso(T0 + 9000)}` }] }, 'LIMIT_REQUIRED'],
    ['overlapping', { slots: [slot(1, 20, { exportW: 0 }), slot(10, 30, { importW: 1 })] }, 'SLOTS_OVERLAP'],
    ['past', { slots: [slot(-20, -10, { exportW: 0 })] }, 'SLOT_IN_PAST'],
    ['beyond 7 days', { slots: [slot(1, 8 * 86_400, { exportW: 0 })] }, 'SLOT_TOO_FAR'],
    ['a bad interval', { slots: [{ interval: 'noon', exportW: 0 }] }, 'SLOT_INVALID'],
  ])('a slot %s is a named 400 and stores nothing', async (_, body, code) => {
    const before = (await req('GET')).json().slots;
    const res = await req('PUT', body);
    expect([res.statusCode, res.json().code]).toEqual([400, code]);
    expect((await req('GET')).json().slots).toEqual(before);
  });

  it('a negative or fractional watt, an unknown key: 400', async () => {
    for (const w of [{ exportW: -1 }, { exportW: 1.5 }, { curtail: true }])
      expect((await req('PUT', { slots: [slot(1, 9, w as unknown as Record<string, number>)] })).statusCode).toBe(400);
  });

  it('a partner not granted every inverter may read but not write; plan.read alone may not write; another site is 404', async () => {
    const res = await req('PUT', { slots: [slot(1, 9, { exportW: 0 })] }, tokens.meterOnly);
    expect([res.statusCode, res.json().code]).toEqual([403, 'LIMITS_NOT_GRANTED']);
    expect((await req('DELETE', undefined, tokens.meterOnly)).statusCode).toBe(403);
    expect((await req('GET', undefined, tokens.meterOnly)).statusCode).toBe(200);
    expect((await req('PUT', { slots: [] }, tokens.reader)).statusCode).toBe(403);
    expect((await req('GET', undefined, tokens.all, {}, 'elsewhere')).json().code).toBe('SITE_NOT_FOUND');
  });

  it('DELETE removes it (204), then there is none (404)', async () => {
    expect((await req('PUT', { slots: [slot(1, 9, { exportW: 0 })] })).statusCode).toBe(200);
    expect((await req('DELETE')).statusCode).toBe(204);
    const again = await req('DELETE');
    expect([again.statusCode, again.json().code]).toEqual([404, 'LIMITS_NOT_FOUND']);
    expect((await req('GET')).json().slots).toEqual([]);
  });
});
