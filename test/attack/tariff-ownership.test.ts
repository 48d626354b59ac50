/**
 * Dynamic tariffs belong to the client that created them, over real HTTP against the daemon: a
 * partner assigned only the grid meter can neither read nor overwrite another partner's tariff
 * (404, exactly as for a tariff that does not exist), the site owner's customer token reaches
 * every tariff, a tariff stored before owners were recorded is left to the site owner, and
 * writes past a client's quotas are refused whole with a named error.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addClient } from '../../src/auth/clients.js';
import { migrate } from '../../src/store/db.js';
import { sqliteDriver } from '../../src/store/driver.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { attackLog } from '../support/attack-log.js';
import { attackCount } from '../support/attack-scale.js';
import { basic, bearer, consent, postForm, redirectParams } from '../support/auth.js';
import { demoSite } from '../support/demo.js';

// the build for this Node (src/store/driver.ts): importing better-sqlite3 directly loads 13, which Node 20 cannot run
const BetterSqlite3 = sqliteDriver();

const QUOTA = { maxPerClient: 3, maxValuesPerTariff: 200, maxValuesPerClientPerDay: 300 };
const LEGACY_ID = 'legacy-tariff';
const DAY0 = Date.parse('2026-01-01T00:00:00Z');

/** `n` quarter-hour import prices from quarter hour `from` on. */
const values = (n: number, from = 0, price = 0.3) =>
  Array.from({ length: n }, (_, i) => ({
    interval: `${new Date(DAY0 + (from + i) * 900_000).toISOString().replace('.000Z', 'Z')}/PT15M`,
    importPrice: price,
  }));
const tariffBody = (n = 0) => ({
  name: 'day-ahead',
  currency: 'EUR',
  timezone: 'Europe/Berlin',
  kind: 'import',
  ...(n > 0 ? { values: values(n) } : {}),
});

/** A database as the release before owners left it: one tariff with values, no owner column. */
function legacyDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-legacy-'));
  const db = new BetterSqlite3(join(dir, 'sitegw.db'));
  migrate(
    db,
    MIGRATIONS.slice(
      0,
      MIGRATIONS.findIndex((m) => m.description.startsWith('dynamic tariffs belong')),
    ),
  );
  db.prepare(
    "INSERT INTO tariffs (id, name, currency, timezone, kind, created_at) VALUES (?, 'old', 'EUR', 'UTC', 'import', 0)",
  ).run(LEGACY_ID);
  db.prepare('INSERT INTO tariff_values (tariff_id, start_s, end_s, import_price) VALUES (?, ?, ?, 0.25)').run(
    LEGACY_ID,
    DAY0 / 1000,
    DAY0 / 1000 + 900,
  );
  db.close();
  return dir;
}

/** every line the daemons of this file log, scanned for secrets at its end (support/attack-log.ts) */
const { log } = attackLog();

describe('dynamic tariffs belong to their creator', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let dataDir: string;
  const tokens: Record<string, string> = {};
  const api = () => demo.credentials.apiUrl;
  const send = async (method: 'GET' | 'POST' | 'PATCH', path: string, who: string, body?: unknown) => {
    const res = await fetch(`${api()}${path}`, {
      method,
      headers: { ...bearer(tokens[who]!), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };
  const page = (id: string, who: string) =>
    send('GET', `/api/v1/dynamicTariffs/${id}?interval=2026-01-01T00:00:00Z/P7D`, who);
  const stored = () => {
    const db = demo.daemon.ctx.db;
    return {
      tariffs: db
        .prepare('SELECT owner_client AS owner, count(*) AS n FROM tariffs GROUP BY owner_client ORDER BY owner_client')
        .all(),
      values: db.prepare('SELECT count(*) FROM tariff_values').pluck().get(),
    };
  };

  beforeAll(async () => {
    dataDir = legacyDataDir();
    demo = await demoSite({
      log,
      speed: 60,
      dataDir,
      configure: (c) => void (c.limits.dynamicTariffs = QUOTA),
    });
    const db = demo.daemon.ctx.db;
    const known = new Set(demo.daemon.site.devices.keys());
    const partners = {
      'battery-app': ['inverter', 'battery-1'],
      'grid-app': ['grid-meter'],
      'quota-app': ['grid-meter'],
      'count-app': ['grid-meter'],
    };
    for (const [id, devices] of Object.entries(partners)) {
      const { secret } = await addClient(
        db,
        { id, devices, scopes: ['device.read', 'device.write'] },
        Date.now(),
        known,
      );
      tokens[id] = (
        await postForm(
          demo.credentials.tokenUrl,
          { grant_type: 'client_credentials' },
          { authorization: basic(id, secret!) },
        )
      ).body.access_token;
    }
    const c = demo.credentials;
    tokens.partner = (
      await postForm(
        c.tokenUrl,
        { grant_type: 'client_credentials' },
        { authorization: basic(c.client.id, c.client.secret) },
      )
    ).body.access_token;
    const { answer } = await consent({
      apiUrl: api(),
      query: { response_type: 'code', client_id: c.client.id, state: 's' },
      ...c.owner,
    });
    const code = redirectParams(answer.headers.get('location')).get('code')!;
    tokens.owner = (
      await postForm(
        c.tokenUrl,
        { grant_type: 'authorization_code', code },
        { authorization: basic(c.client.id, c.client.secret) },
      )
    ).body.access_token;
  });
  afterAll(async () => {
    await demo?.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("another client can neither read nor change a partner's tariff: 404 as if it did not exist", async () => {
    const created = await send('POST', '/api/v1/dynamicTariffs', 'battery-app', tariffBody(4));
    expect(created.status).toBe(201);
    const id = created.body.tariffId as string;
    const before = await page(id, 'battery-app');
    expect(before.status).toBe(200);

    const missing = await page('no-such-tariff', 'grid-app');
    for (let i = 0; i < attackCount(3); i++) {
      const read = await page(id, 'grid-app');
      expect(read.status).toBe(404);
      expect(read.body).toEqual({ ...missing.body, message: missing.body.message.replace('no-such-tariff', id) });
      const patch = await send('PATCH', `/api/v1/dynamicTariffs/${id}`, 'grid-app', { values: values(1, 0, 999999) });
      expect(patch.status).toBe(404);
      expect(patch.body.code).toBe('TARIFF_NOT_FOUND');
    }
    // the customer token's client is no partner of this tariff either, with a partner token
    expect((await page(id, 'partner')).status).toBe(404);
    expect(await page(id, 'battery-app')).toEqual({ ...before, headers: expect.anything() });
  });

  it("the site owner's customer token reads and changes every tariff; the owner keeps its own", async () => {
    const id = (await send('POST', '/api/v1/dynamicTariffs', 'battery-app', tariffBody(2))).body.tariffId as string;
    expect((await page(id, 'owner')).status).toBe(200);
    const patch = await send('PATCH', `/api/v1/dynamicTariffs/${id}`, 'owner', { values: values(1, 0, 0.41) });
    expect(patch.status).toBe(200);
    expect((await page(id, 'battery-app')).body.values[0].importPrice).toBe(0.41);
  });

  it('a tariff stored before owners were recorded is left to the site owner', async () => {
    const owner = await page(LEGACY_ID, 'owner');
    expect(owner.status).toBe(200);
    expect(owner.body.values).toEqual([{ interval: '2026-01-01T00:00:00Z/2026-01-01T00:15:00Z', importPrice: 0.25 }]);
    for (const who of ['partner', 'battery-app', 'grid-app']) expect((await page(LEGACY_ID, who)).status).toBe(404);
    expect(
      demo.daemon.ctx.db.prepare('SELECT owner_client FROM tariffs WHERE id = ?').pluck().get(LEGACY_ID),
    ).toBeNull();
  });

  it('values per 24 hours: past the quota a POST or PATCH is refused whole with 429 and Retry-After', async () => {
    const first = await send('POST', '/api/v1/dynamicTariffs', 'quota-app', tariffBody(200));
    expect(first.status).toBe(201);
    const id = first.body.tariffId as string;
    const before = stored();
    const pageBefore = await page(id, 'quota-app');

    const post = await send('POST', '/api/v1/dynamicTariffs', 'quota-app', tariffBody(150));
    expect(post.status).toBe(429);
    expect(post.body).toMatchObject({ statusCode: 429, code: 'TARIFF_QUOTA_EXCEEDED' });
    expect(post.body.message).toMatch(/maxValuesPerClientPerDay \(300\)/);
    const retry = Number(post.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(86_400);

    // replacing 150 stored values with new prices still writes 150 values
    const patch = await send('PATCH', `/api/v1/dynamicTariffs/${id}`, 'quota-app', { values: values(150, 0, 0.5) });
    expect(patch.status).toBe(429);
    expect(patch.body.code).toBe('TARIFF_QUOTA_EXCEEDED');
    expect(stored()).toEqual(before);
    expect(await page(id, 'quota-app')).toEqual({ ...pageBefore, headers: expect.anything() });

    // within what is left, writes go on; another client has its own quota
    expect(
      (await send('PATCH', `/api/v1/dynamicTariffs/${id}`, 'quota-app', { values: values(100, 0, 0.5) })).status,
    ).toBe(200);
    expect((await send('POST', '/api/v1/dynamicTariffs', 'count-app', tariffBody(150))).status).toBe(201);
  });

  it('values per tariff and tariffs per client: past them 409 TARIFF_LIMIT_REACHED, nothing stored', async () => {
    // count-app holds one tariff of 150 values (above)
    const created = await send('POST', '/api/v1/dynamicTariffs', 'count-app', tariffBody(0));
    expect(created.status).toBe(201);
    const id = created.body.tariffId as string;
    expect((await send('PATCH', `/api/v1/dynamicTariffs/${id}`, 'count-app', { values: values(100) })).status).toBe(
      200,
    );
    const before = stored();
    const over = await send('PATCH', `/api/v1/dynamicTariffs/${id}`, 'count-app', { values: values(101, 100) });
    expect(over.status).toBe(409);
    expect(over.body).toMatchObject({ code: 'TARIFF_LIMIT_REACHED' });
    expect(over.body.message).toMatch(/maxValuesPerTariff \(200\)/);
    expect(stored()).toEqual(before);

    expect((await send('POST', '/api/v1/dynamicTariffs', 'count-app', tariffBody(0))).status).toBe(201);
    const third = stored();
    for (let i = 0; i < attackCount(3); i++) {
      const refused = await send('POST', '/api/v1/dynamicTariffs', 'count-app', tariffBody(1));
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe('TARIFF_LIMIT_REACHED');
      expect(refused.body.message).toMatch(/maxPerClient/);
    }
    expect(stored()).toEqual(third);
  });
});
