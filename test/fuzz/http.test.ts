/**
 * Generated malformed requests against every route of the running daemon (the route table is
 * walked as test/e2e/auth-routes.test.ts does, so a route added later is fuzzed too) and its
 * token endpoint, with and without a valid token, over real HTTP; then raw bytes that are not
 * HTTP at all. What must hold: no 5xx, no error logged, every API refusal a 4xx with the error
 * body, every token refusal an RFC 6749 error, the daemon still healthy, the stored data unchanged.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, partnerToken } from '../support/auth.js';
import { demoSite, getJson } from '../support/demo.js';
import { capturingLogger } from '../support/uplink.js';
import { enc, int, jsonJunk, junk, mutateN, pick, type Rng, rng, SCALE, SEED, storedChecksum, Tally } from './gen.js';

type Demo = Awaited<ReturnType<typeof demoSite>>;

/** 10:05 on the daemon clock at speed 1: no bucket closes during the run, so any change is the fuzz's doing */
const START = Date.UTC(2026, 5, 1, 10, 5, 0);
const GOOD_QUERY: Record<string, string[]> = {
  interval: ['2026-06-01T04:00:00Z/2026-06-01T10:00:00Z', '2026-06-01T04:00:00Z/PT6H', 'PT6H/2026-06-01T10:00:00Z'],
  resolution: ['PT15M', 'PT1H', 'P1D'],
  include: ['default', 'energy', 'default,energy'],
  compact: ['true', 'false'],
  nextToken: ['eyJ2IjoxfQ.abc'],
};

interface Answer {
  status: number;
  text: string;
  contentType: string;
}

async function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer | null> {
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, { method, headers, body, redirect: 'manual' });
  } catch (err) {
    // fetch itself refuses some junk (bad header bytes, GET with a body): nothing reached the daemon
    const cause = (err as { cause?: { code?: string } }).cause;
    if (err instanceof TypeError && (!/fetch failed/.test(err.message) || cause?.code === 'UND_ERR_INVALID_ARG'))
      return null;
    throw err;
  }
  return { status: res.status, text: await res.text(), contentType: res.headers.get('content-type') ?? '' };
}

function errorBodyProblem(a: Answer): string | null {
  if (!a.contentType.includes('application/json')) return `not JSON (${a.contentType})`;
  const b = JSON.parse(a.text) as { statusCode?: unknown; code?: unknown; message?: unknown };
  if (b.statusCode !== a.status || typeof b.code !== 'string' || typeof b.message !== 'string')
    return `error body ${a.text.slice(0, 200)}`;
  return null;
}

describe('fuzz: HTTP routes and the token endpoint', () => {
  let demo: Demo;
  let token: string;
  let before: string;
  let telemetryBefore: unknown;
  const cap = capturingLogger();
  const problems: string[] = [];
  const telemetryUrl = () =>
    `${demo.url}/api/v1/devices/${demo.daemon.site.streams()[0]!.id}/telemetry?interval=2026-06-01T04:00:00Z/PT6H&include=default,energy`;

  beforeAll(async () => {
    demo = await demoSite({ speed: 1, start: START, history: 'PT6H', log: cap.log });
    token = await partnerToken(demo.credentials);
    before = storedChecksum(demo.daemon.ctx.db);
    telemetryBefore = (await getJson(telemetryUrl(), token)).body;
  });
  afterAll(async () => {
    await demo?.cleanup();
  });

  const check = (what: string, a: Answer | null, needsErrorBody: 'api' | 'oauth' | 'none', t: Tally) => {
    if (!a) return t.add('refused by the client');
    t.add(`${Math.floor(a.status / 100)}xx`);
    if (a.status >= 500 || a.status < 100) problems.push(`${what.slice(0, 300)} → ${a.status} ${a.text.slice(0, 200)}`);
    else if (a.status >= 400 && needsErrorBody === 'api') {
      const p = errorBodyProblem(a);
      if (p) problems.push(`${what.slice(0, 300)} → ${a.status}: ${p}`);
    } else if (a.status >= 400 && needsErrorBody === 'oauth') {
      let b: { error?: unknown } = {};
      try {
        b = JSON.parse(a.text);
      } catch {
        // reported below
      }
      if (typeof b.error !== 'string')
        problems.push(`${what} → ${a.status}: not an RFC 6749 error: ${a.text.slice(0, 200)}`);
    }
  };

  /** a path parameter: the real one, one that does not exist, or junk */
  const param = (r: Rng, name: string): string => {
    const real = name === 'siteId' ? demo.siteId : name === 'synthId' ? pick(r, demo.daemon.site.streams()).id : 'x';
    switch (int(r, 4)) {
      case 0:
        return real;
      case 1:
        return enc(mutateN(r, real));
      case 2:
        return enc(junk(r));
      default:
        return junk(r).replace(/[?#/]/g, '');
    }
  };

  const query = (r: Rng): string => {
    const parts: string[] = [];
    for (const [k, good] of Object.entries(GOOD_QUERY)) {
      const roll = int(r, 5);
      if (roll === 0) continue;
      const v =
        roll === 1
          ? pick(r, good)
          : roll === 2
            ? mutateN(r, pick(r, good))
            : roll === 3
              ? junk(r)
              : `${pick(r, good)}&${k}=${pick(r, good)}`;
      parts.push(roll === 4 ? `${k}=${v}` : `${enc(k)}=${int(r, 3) ? enc(v) : v.replace(/[#\s]/g, '')}`);
    }
    if (int(r, 4) === 0) parts.push(`${enc(junk(r, 8))}=${enc(junk(r))}`);
    return parts.length ? `?${parts.join('&')}` : '';
  };

  it('every route, every query parameter: no 5xx, API refusals carry the error body', async () => {
    const r = rng(SEED);
    const t = new Tally();
    const routes = demo.daemon.app.routeTable.filter((x) => x.method !== 'HEAD');
    const cases = 2400 * SCALE;
    const one = async () => {
      const route = pick(r, routes);
      const path = route.url.replace(/:(\w+)/g, (_, n: string) => param(r, n)) + query(r);
      const auth = int(r, 5);
      const headers: Record<string, string> = {};
      if (auth <= 2) headers.authorization = `Bearer ${token}`;
      else if (auth === 3)
        headers.authorization = pick(r, [`Bearer ${mutateN(r, token)}`, 'Bearer', `Basic ${junk(r)}`, junk(r)]).replace(
          /[^\t\x20-\x7e]/g,
          '',
        );
      let body: string | undefined;
      if (route.method !== 'GET') {
        headers['content-type'] = pick(r, [
          'application/json',
          'application/json',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          junk(r, 10).replace(/[^\x20-\x7e]/g, ''),
        ]);
        body = int(r, 2)
          ? JSON.stringify(jsonJunk(r))
          : mutateN(
              r,
              JSON.stringify({
                publishTo: [{ clientId: 'demo-partner', data: ['telemetry-realtime'] }],
                name: 'x',
                currency: 'EUR',
                timezone: 'Europe/Berlin',
              }),
            );
      }
      const api = route.url.startsWith('/api/') || route.url === '/metrics';
      check(
        `${route.method} ${path}`,
        await send(demo.url, route.method, path, headers, body),
        api ? 'api' : 'none',
        t,
      );
    };
    for (let i = 0; i < cases; i += 16) await Promise.all(Array.from({ length: Math.min(16, cases - i) }, one));
    console.log(t.line('HTTP routes'));
    expect(problems).toEqual([]);
    expect(t.counts.get('2xx') ?? 0, 'some requests should still get through').toBeGreaterThan(0);
    expect(t.counts.get('4xx') ?? 0).toBeGreaterThan(cases / 4);
  });

  it('the token endpoint: mangled forms, Basic headers and bodies get RFC 6749 errors', async () => {
    const r = rng(SEED + 1);
    const t = new Tally();
    const { id, secret } = demo.credentials.client;
    const form = () => {
      const fields: [string, string][] = [];
      const good: Record<string, string[]> = {
        grant_type: ['client_credentials', 'authorization_code', 'refresh_token', 'password'],
        scope: ['svc/device.read', 'svc/device.read svc/device.write', 'openid'],
        code: ['sgw_ac_x'],
        refresh_token: ['sgw_rt_x'],
        redirect_uri: ['http://localhost/callback'],
        code_verifier: ['a'.repeat(43)],
        client_id: [id],
      };
      for (const [k, vs] of Object.entries(good)) {
        const roll = int(r, 5);
        if (roll === 0 || (roll === 1 && k !== 'grant_type')) continue;
        fields.push([
          roll === 4 ? mutateN(r, k) : k,
          roll <= 2 ? pick(r, vs) : roll === 3 ? mutateN(r, pick(r, vs)) : junk(r),
        ]);
      }
      if (int(r, 6) === 0) fields.push(['grant_type', 'client_credentials']);
      return new URLSearchParams(fields).toString();
    };
    const authz = () =>
      pick(r, [
        basic(id, secret.slice(0, -1) + 'x'),
        `Basic ${Buffer.from(`${enc(mutateN(r, id))}:${secret}`).toString('base64')}`,
        `Basic ${Buffer.from(mutateN(r, `${id}:${secret}`)).toString('base64')}`,
        `Basic ${mutateN(r, Buffer.from(`${id}:${secret}`).toString('base64'))}`,
        `Basic ${Buffer.from(id).toString('base64')}`,
        `Basic ${Buffer.from(`${id}:${secret}:${secret}`).toString('base64')}`,
        `Basic ${Buffer.from(`%zz:%`).toString('base64')}`,
        'Basic',
        'Basic ====',
        `Bearer ${token}`,
        junk(r).replace(/[^\t\x20-\x7e]/g, ''),
      ]);
    const cases = 1200 * SCALE;
    const one = async () => {
      const headers: Record<string, string> = {
        'content-type': pick(r, [
          'application/x-www-form-urlencoded',
          'application/x-www-form-urlencoded',
          'application/json',
          'text/plain',
          'application/x-www-form-urlencoded; charset=utf-16',
        ]),
      };
      if (int(r, 4)) headers.authorization = authz();
      const body = int(r, 8) === 0 ? JSON.stringify(jsonJunk(r)) : int(r, 10) === 0 ? junk(r, 20000) : form();
      check('POST /oauth2/token', await send(demo.url, 'POST', '/oauth2/token', headers, body), 'oauth', t);
    };
    for (let i = 0; i < cases; i += 8) await Promise.all(Array.from({ length: Math.min(8, cases - i) }, one));
    console.log(t.line('token endpoint'));
    expect(problems).toEqual([]);
    expect(t.counts.get('2xx') ?? 0, 'a mangled request never earns a token').toBe(0);
  });

  it('bytes that are not HTTP: the server answers 4xx or closes, and keeps serving', async () => {
    const r = rng(SEED + 2);
    const t = new Tally();
    const { port } = new URL(demo.url);
    const good = `GET /api/v1/sites HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`;
    const cases = 300 * SCALE;
    const one = () =>
      new Promise<void>((resolve) => {
        const bytes = int(r, 3)
          ? Buffer.from(mutateN(r, good, 6), 'latin1')
          : Buffer.from(Array.from({ length: int(r, 3000) }, () => int(r, 256)));
        const s = connect(Number(port), '127.0.0.1');
        let got = '';
        s.on('data', (d) => (got += d.toString('latin1')));
        s.on('error', () => undefined);
        s.on('close', () => {
          const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0);
          t.add(status ? `${Math.floor(status / 100)}xx` : 'closed');
          if (status >= 500)
            problems.push(`raw ${JSON.stringify(bytes.toString('latin1').slice(0, 120))} → ${got.slice(0, 200)}`);
          resolve();
        });
        s.write(bytes, () => s.end());
        setTimeout(() => s.destroy(), 2000);
      });
    for (let i = 0; i < cases; i += 10) await Promise.all(Array.from({ length: Math.min(10, cases - i) }, one));
    console.log(t.line('raw HTTP bytes'));
    expect(problems).toEqual([]);
  });

  it('afterwards: healthy, nothing logged as failed, stored data and a telemetry answer unchanged', async () => {
    expect((await fetch(`${demo.url}/healthz`)).status).toBe(200);
    const failed = cap.lines().filter((l) => (l.level as number) >= 50);
    expect(failed.map((l) => `${String(l.msg)}: ${JSON.stringify(l.err).slice(0, 1500)}`)).toEqual([]);
    expect(storedChecksum(demo.daemon.ctx.db)).toBe(before);
    expect((await getJson(telemetryUrl(), token)).body).toEqual(telemetryBefore);
    console.log(
      '[fuzz] after the HTTP fuzz: /healthz 200, 0 errors logged, buckets/streams/publishTo/grid events checksum and a telemetry answer unchanged',
    );
  });
});
