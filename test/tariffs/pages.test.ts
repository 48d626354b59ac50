/**
 * GET /api/v1/dynamicTariffs/{id}: 7-day pages over 30 days of stored history, walked with and
 * without `interval`, over the real HTTP app and SQLite. Every value must come back exactly
 * once, pages must be adjacent, and the token must be refused when altered or moved.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/http/app.js';
import { AuthService } from '../../src/auth/service.js';
import { silentLogger } from '../../src/core/log.js';
import { siteConfig } from './fixture.js';
import { type TariffApi, tariffApi } from './http.js';

const H = 3_600_000;
const DAY = 24 * H;
const WEEK = 7 * DAY;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const ms = (s: string) => Date.parse(s);

// the daemon clock: a Monday noon, a little past the quarter hour
const NOW = ms('2026-11-23T12:07:00Z');
// 30 days of hourly prices up to noon, then the quarter hour in progress and one to come
const HISTORY_START = ms('2026-10-24T12:00:00Z');
const HOURS = 30 * 24;

interface Value {
  interval: string;
  importPrice: number;
  exportPrice: number;
}
interface Page {
  tariffId: string;
  name: string;
  interval: string;
  values: Value[];
  nextToken: string | null;
}

const hourly: Value[] = Array.from({ length: HOURS }, (_, i) => ({
  interval: `${iso(HISTORY_START + i * H)}/PT1H`,
  importPrice: 0.1 + i / 1000,
  exportPrice: i / 2000,
}));
const current: Value = { interval: '2026-11-23T12:00:00Z/2026-11-23T12:15:00Z', importPrice: 0.5, exportPrice: 0.05 };
const future: Value = { interval: '2026-11-23T12:15:00Z/PT15M', importPrice: 0.6, exportPrice: 0.06 };

/** A value as the API answers it: canonical UTC start/end. */
function canonical(v: Value): Value {
  const [a, b] = v.interval.split('/') as [string, string];
  const start = ms(a);
  const end = b.startsWith('P') ? start + (b === 'PT1H' ? H : 15 * 60_000) : ms(b);
  return { ...v, interval: `${iso(start)}/${iso(end)}` };
}
const startOf = (v: Value) => ms(v.interval.split('/')[0]!);
const windowOf = (p: Page) => p.interval.split('/').map(ms) as [number, number];

describe('dynamic tariff pages', () => {
  let api: TariffApi;
  let tariffId: string;
  let otherId: string;
  const all = [...hourly, current, future].map(canonical);

  const get = async (id: string, query: string) => {
    const r = await api.req('GET', `/api/v1/dynamicTariffs/${id}${query ? `?${query}` : ''}`);
    return { status: r.statusCode, body: r.json() as Page & { code?: string; message?: string } };
  };

  async function walk(firstQuery: string): Promise<Page[]> {
    const pages: Page[] = [];
    let r = await get(tariffId, firstQuery);
    for (;;) {
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      pages.push(r.body);
      if (r.body.nextToken === null) return pages;
      if (pages.length > 60) throw new Error('the walk does not end');
      r = await get(tariffId, `nextToken=${encodeURIComponent(r.body.nextToken)}`);
    }
  }

  /** no gap and no overlap between pages, every value on the page holding its start, none twice */
  function checkWalk(pages: Page[]): Value[] {
    for (let i = 0; i < pages.length; i++) {
      const [s, e] = windowOf(pages[i]!);
      expect(e - s).toBeLessThanOrEqual(WEEK);
      if (i > 0) expect(e).toBe(windowOf(pages[i - 1]!)[0]); // adjacent, walking back
      for (const v of pages[i]!.values) {
        expect(startOf(v)).toBeGreaterThanOrEqual(s);
        expect(startOf(v)).toBeLessThan(e);
      }
      expect(pages[i]!.tariffId).toBe(tariffId);
      expect(pages[i]!.name).toBe('Day-ahead DE-LU');
    }
    const got = pages.flatMap((p) => p.values);
    expect(new Set(got.map((v) => v.interval)).size).toBe(got.length);
    return got;
  }

  const sortByStart = (vs: Value[]) => [...vs].sort((a, b) => startOf(a) - startOf(b));

  beforeAll(async () => {
    api = await tariffApi(siteConfig(), NOW);
    // the first ten days come with the POST, the rest in two PATCHes
    const created = await api.req('POST', '/api/v1/dynamicTariffs', {
      name: 'Day-ahead DE-LU',
      currency: 'EUR',
      timezone: 'Europe/Berlin',
      kind: 'both',
      values: hourly.slice(0, 240),
    });
    expect(created.statusCode, created.body).toBe(201);
    tariffId = created.json().tariffId;
    expect(created.headers.location).toBe(`/api/v1/dynamicTariffs/${tariffId}`);
    for (const values of [hourly.slice(240), [current, future]]) {
      const r = await api.req('PATCH', `/api/v1/dynamicTariffs/${tariffId}`, { values });
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json()).toEqual({ tariffId, inserted: values.length, replaced: 0 });
    }
    const other = await api.req('POST', '/api/v1/dynamicTariffs', {
      name: 'Other',
      currency: 'EUR',
      timezone: 'Europe/Berlin',
      kind: 'import',
    });
    otherId = other.json().tariffId;
  });
  afterAll(async () => api?.close());

  it('without interval: the 7 days up to the quarter hour in progress, then back through the whole history', async () => {
    const pages = await walk('');
    // ends after the quarter hour in progress (12:00-12:15), so the price in force now is on it
    expect(pages[0]!.interval).toBe('2026-11-16T12:15:00Z/2026-11-23T12:15:00Z');
    expect(pages[0]!.values.at(-1)).toEqual(canonical(current));
    const got = checkWalk(pages);
    // every stored value but the future one, exactly once
    expect(sortByStart(got)).toEqual(sortByStart(all.filter((v) => v.interval !== canonical(future).interval)));
    // 30 days reach into the fifth window back; the walk stops there
    expect(pages).toHaveLength(5);
    expect(windowOf(pages.at(-1)!)[0]).toBeLessThanOrEqual(HISTORY_START);
    // a value that starts at 12:00 on the boundary day lies on the older page, across the boundary
    const straddling = `${iso(ms('2026-11-16T12:00:00Z'))}/${iso(ms('2026-11-16T13:00:00Z'))}`;
    expect(pages[1]!.values.map((v) => v.interval)).toContain(straddling);
    expect(pages[0]!.values.map((v) => v.interval)).not.toContain(straddling);
  });

  it('with interval: the latest 7 days inside it first, then 7 days further back each, until interval.start', async () => {
    // 28 Oct 00:00 CET .. 20 Nov 06:00Z: 23 days and 7 hours
    const interval = '2026-10-28T00:00:00%2B01:00/2026-11-20T06:00:00Z';
    const [s, e] = [ms('2026-10-27T23:00:00Z'), ms('2026-11-20T06:00:00Z')];
    const pages = await walk(`interval=${interval}`);
    expect(pages.map((p) => p.interval)).toEqual([
      '2026-11-13T06:00:00Z/2026-11-20T06:00:00Z',
      '2026-11-06T06:00:00Z/2026-11-13T06:00:00Z',
      '2026-10-30T06:00:00Z/2026-11-06T06:00:00Z',
      '2026-10-27T23:00:00Z/2026-10-30T06:00:00Z',
    ]);
    const got = checkWalk(pages);
    expect(sortByStart(got)).toEqual(sortByStart(all.filter((v) => startOf(v) >= s && startOf(v) < e)));
    expect(got).toHaveLength((e - s) / H); // hourly values, one per hour of the interval
  });

  it('with an interval reaching past the stored history: the future is on the first page and the walk goes on to interval.start', async () => {
    const pages = await walk('interval=2026-09-01T00:00:00Z/2026-12-01T00:00:00Z');
    const got = checkWalk(pages);
    expect(sortByStart(got)).toEqual(sortByStart(all));
    // 91 days: windows end 1 Dec, 24 Nov, ... 8 Sep; the sixth (20-27 Oct) holds the oldest
    // value and the seven older ones are empty (spec: nextToken moves back until interval.start)
    expect(pages).toHaveLength(13);
    expect(pages[5]!.interval).toBe('2026-10-20T00:00:00Z/2026-10-27T00:00:00Z');
    expect(pages.at(-1)!.interval).toBe('2026-09-01T00:00:00Z/2026-09-08T00:00:00Z');
    expect(pages.slice(6).flatMap((p) => p.values)).toEqual([]);
  });

  it('an interval with nothing stored in it: empty pages back to interval.start', async () => {
    const pages = await walk('interval=2025-01-01T00:00:00Z/P30D');
    expect(pages.map((p) => p.interval)).toEqual([
      '2025-01-24T00:00:00Z/2025-01-31T00:00:00Z',
      '2025-01-17T00:00:00Z/2025-01-24T00:00:00Z',
      '2025-01-10T00:00:00Z/2025-01-17T00:00:00Z',
      '2025-01-03T00:00:00Z/2025-01-10T00:00:00Z',
      '2025-01-01T00:00:00Z/2025-01-03T00:00:00Z',
    ]);
    expect(pages.flatMap((p) => p.values)).toEqual([]);
  });

  it('nextToken wins over interval', async () => {
    const first = await get(tariffId, '');
    const token = encodeURIComponent(first.body.nextToken!);
    const plain = await get(tariffId, `nextToken=${token}`);
    const withInterval = await get(tariffId, `nextToken=${token}&interval=2025-01-01T00:00:00Z/P1D`);
    const withBadInterval = await get(tariffId, `nextToken=${token}&interval=garbage`);
    expect(withInterval.body).toEqual(plain.body);
    expect(withBadInterval.body).toEqual(plain.body);
    expect(plain.body.interval).toBe('2026-11-09T12:15:00Z/2026-11-16T12:15:00Z');
  });

  it('a tampered token is refused with 400', async () => {
    const token = (await get(tariffId, '')).body.nextToken!;
    const [payload, sig] = token.split('.') as [string, string];
    // move the cursor: the same payload with another end, re-encoded, keeps the old signature
    const forged = JSON.parse(Buffer.from(payload, 'base64url').toString());
    forged.e -= 3 * WEEK;
    const moved = `${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${sig}`;
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    for (const bad of [
      moved,
      flip(token, 5),
      flip(token, token.length - 3),
      `${payload}.`,
      payload,
      `${token}.x`,
      'abc',
      '',
      'x'.repeat(600),
    ]) {
      const r = await get(tariffId, `nextToken=${encodeURIComponent(bad)}`);
      expect(r.status, bad).toBe(400);
      expect(Object.keys(r.body).sort()).toEqual(['code', 'error', 'message', 'statusCode']);
      expect(['INVALID_NEXT_TOKEN', 'INVALID_PARAMETER']).toContain(r.body.code);
      expect(r.body.message).toMatch(/nextToken/);
    }
    const moved400 = await get(tariffId, `nextToken=${encodeURIComponent(moved)}`);
    expect(moved400.body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'INVALID_NEXT_TOKEN' });
    expect(moved400.body.message).toMatch(/altered/);
  });

  it("a token of another tariff is refused with 400, though its signature is the gateway's own", async () => {
    const token = (await get(tariffId, '')).body.nextToken!;
    const r = await get(otherId, `nextToken=${encodeURIComponent(token)}`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'INVALID_NEXT_TOKEN' });
    expect(r.body.message).toMatch(/another tariff/);
  });

  it('a token stays valid after a restart: the key is kept in the database', async () => {
    const token = (await get(tariffId, '')).body.nextToken!;
    const before = await get(tariffId, `nextToken=${encodeURIComponent(token)}`);
    const dir = mkdtempSync(join(tmpdir(), 'sitegw-restart-'));
    const auth = new AuthService({
      db: api.db,
      config: api.site.config.auth,
      dataDir: dir,
      siteId: 'home',
      log: silentLogger(),
    });
    auth.start();
    // a second app on the same database, as after a daemon restart
    const again = await buildApp({
      site: api.site,
      db: api.db,
      auth,
      now: () => NOW,
      tariffQuota: api.site.config.limits.dynamicTariffs,
    });
    try {
      const r = await again.inject({
        method: 'GET',
        url: `/api/v1/dynamicTariffs/${tariffId}?nextToken=${encodeURIComponent(token)}`,
        headers: { authorization: `Bearer ${api.tokens.reader}` },
      });
      expect(r.statusCode).toBe(200);
      expect(r.json()).toEqual(before.body);
    } finally {
      await again.close();
      auth.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an unknown tariff is a 404 with the same body as an unknown site', async () => {
    const tariff = await api.req('GET', '/api/v1/dynamicTariffs/no-such-tariff');
    const site = await api.req('GET', '/api/v1/sites/no-such-site/topology');
    expect(tariff.statusCode).toBe(404);
    expect(site.statusCode).toBe(404);
    const [t, s] = [tariff.json(), site.json()];
    expect(Object.keys(t).sort()).toEqual(Object.keys(s).sort());
    expect({ statusCode: t.statusCode, error: t.error }).toEqual({ statusCode: s.statusCode, error: s.error });
    expect(t.code).toBe('TARIFF_NOT_FOUND');
    const patch = await api.req('PATCH', '/api/v1/dynamicTariffs/no-such-tariff', { values: [current] });
    expect(patch.statusCode).toBe(404);
    expect(patch.json()).toEqual(t);
  });

  it('reading needs device.read, writing device.write; no token is a 401', async () => {
    const body = { name: 'x', currency: 'EUR', timezone: 'UTC', kind: 'import' };
    expect((await api.req('GET', `/api/v1/dynamicTariffs/${tariffId}`, undefined, api.tokens.reader)).statusCode).toBe(
      200,
    );
    const post = await api.req('POST', '/api/v1/dynamicTariffs', body, api.tokens.reader);
    expect(post.statusCode).toBe(403);
    expect(post.headers['www-authenticate']).toMatch(/insufficient_scope.*svc\/device\.write/);
    expect(
      (await api.req('PATCH', `/api/v1/dynamicTariffs/${tariffId}`, { values: [current] }, api.tokens.reader))
        .statusCode,
    ).toBe(403);
    const anonymous = await api.app.inject({ method: 'GET', url: `/api/v1/dynamicTariffs/${tariffId}` });
    expect(anonymous.statusCode).toBe(401);
    expect(api.app.routeTable.filter((r) => r.url.startsWith('/api/v1/dynamicTariffs') && r.method !== 'HEAD')).toEqual(
      [
        { method: 'POST', url: '/api/v1/dynamicTariffs', auth: { permission: 'device.write' } },
        { method: 'PATCH', url: '/api/v1/dynamicTariffs/:tariffId', auth: { permission: 'device.write' } },
        { method: 'GET', url: '/api/v1/dynamicTariffs/:tariffId', auth: { permission: 'device.read' } },
      ],
    );
  });
});
