/**
 * Parallel bursts against the failure limits and the secret-hashing gate, over real sockets to a
 * running daemon. Each attacker and each victim has its own loopback source address (127.0.0.0/8
 * all reaches the daemon on 127.0.0.1), so per-address limits are told apart from per-identity
 * ones. Time moves on the token service's own clock; nothing here waits on the wall clock.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rotateClientSecret } from '../../src/auth/clients.js';
import { PI_HASHING } from '../../src/auth/hash-gate.js';
import { setOwnerPassword } from '../../src/auth/owner.js';
import type { SiteConfig } from '../../src/config/types.js';
import type { DemoCredentials } from '../../src/demo/credentials.js';
import { attackLog } from '../support/attack-log.js';
import { attackCount } from '../support/attack-scale.js';
import { basic, FORM, parseForm, rawRequest } from '../support/auth.js';
import { demoSite, waitFor } from '../support/demo.js';

type Reply = Awaited<ReturnType<typeof rawRequest>>;

const LIMIT = 3;
const WINDOW_S = 60;

/** `n` copies of `send` at once; answers in the order they arrived. */
async function burst(n: number, send: () => Promise<Reply>): Promise<Reply[]> {
  const arrived: Reply[] = [];
  await Promise.all(Array.from({ length: n }, () => send().then((r) => arrived.push(r))));
  return arrived;
}

function statuses(replies: Reply[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of replies) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

/** Exactly LIMIT attempts were checked (each answered `checked`); every other one got 429 with Retry-After. */
function heldAtLimit(replies: Reply[], checked: number, n: number): void {
  expect(statuses(replies)).toEqual({ [checked]: LIMIT, 429: n - LIMIT });
  for (const r of replies.filter((x) => x.status === 429)) expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
}

/**
 * The demo's credentials with its client's secret and its owner's password set again at the full
 * strength every client and owner of a site gets: the demo's own are hashed at the demo's
 * (src/auth/secrets.ts), and these bursts are about what a site's checks cost and queue.
 */
async function fullStrength(demo: Awaited<ReturnType<typeof demoSite>>): Promise<DemoCredentials> {
  const { db } = demo.daemon.ctx;
  const c = demo.credentials;
  const secret = await rotateClientSecret(db, c.client.id, Date.now());
  const password = `${c.owner.password}-full`;
  await setOwnerPassword(db, c.owner.username, password, Date.now());
  return { ...c, client: { ...c.client, secret }, owner: { ...c.owner, password } };
}

/**
 * A burst opens one connection per request from one address, more than limits.http lets one host
 * hold (test/attack/slow-clients.test.ts proves that cap); these tests are about what stands
 * behind it, so the cap is opened wide.
 */
function openConnectionCaps(cfg: SiteConfig): void {
  cfg.limits.http.maxConnections = 100_000;
  cfg.limits.http.maxConnectionsPerAddress = 100_000;
}

/** every line the daemons of this file log, scanned for secrets at its end (support/attack-log.ts) */
const { log } = attackLog();

describe('failure limits hold under parallel bursts, per address', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let creds: DemoCredentials;
  let shiftMs = 0;
  const c = () => creds;

  const token = (localAddress: string, body: string, auth = basic(c().client.id, c().client.secret)) =>
    rawRequest({ method: 'POST', url: c().tokenUrl, localAddress, headers: { ...FORM, authorization: auth }, body });
  const login = (localAddress: string, password: string) =>
    rawRequest({
      method: 'POST',
      url: `${c().apiUrl}/login`,
      localAddress,
      headers: FORM,
      body: new URLSearchParams({ username: c().owner.username, password }).toString(),
    });

  let consentForm: [string, string][];
  let consentAction: string;
  const decide = (localAddress: string, password: string) =>
    rawRequest({
      method: 'POST',
      url: `${c().apiUrl}${consentAction}`,
      localAddress,
      headers: FORM,
      body: new URLSearchParams([
        ...consentForm,
        ['username', c().owner.username],
        ['password', password],
        ['decision', 'allow'],
      ]).toString(),
    });

  beforeAll(async () => {
    demo = await demoSite({
      log,
      configure: (cfg) => {
        cfg.auth.maxFailedAttempts = LIMIT;
        cfg.auth.failureWindowSeconds = WINDOW_S;
        openConnectionCaps(cfg);
      },
      authNow: () => Date.now() + shiftMs,
    });
    creds = await fullStrength(demo);
    const page = await rawRequest({ url: `${c().authorizeUrl}?response_type=code&client_id=${c().client.id}&state=s` });
    const form = parseForm(page.text);
    consentForm = form.fields;
    consentAction = form.action;
  });
  afterAll(async () => {
    await demo?.cleanup();
  });
  // every test starts with all windows passed
  beforeEach(() => {
    shiftMs += (WINDOW_S + 1) * 1000;
  });

  it('/login: of a burst of wrong owner passwords LIMIT are checked, the rest get 429; the owner signs in from another address', async () => {
    const n = attackCount(30);
    heldAtLimit(await burst(n, () => login('127.0.1.2', 'wrong-guess')), 401, n);
    const again = await login('127.0.1.2', c().owner.password);
    expect(again.status).toBe(429);
    expect(again.text).toContain('Too many failed attempts');
    const owner = await login('127.0.1.3', c().owner.password);
    expect(owner.status).toBe(303);
    expect(String(owner.headers['set-cookie'])).toContain('sitegw_session=');
  });

  it('/oauth2/token: of a burst of wrong client secrets LIMIT are checked, the rest get 429; the partner gets its token from another address', async () => {
    const n = attackCount(60);
    const replies = await burst(n, () =>
      token('127.0.1.4', 'grant_type=client_credentials', basic(c().client.id, 'wrong')),
    );
    heldAtLimit(replies, 401, n);
    const refused = replies.find((r) => r.status === 429)!;
    expect(refused.body.error).toBe('temporarily_unavailable');
    expect(refused.headers['cache-control']).toBe('no-store');
    expect((await token('127.0.1.4', 'grant_type=client_credentials')).status).toBe(429);
    const partner = await token('127.0.1.5', 'grant_type=client_credentials');
    expect(partner.status).toBe(200);
    expect(partner.body.access_token).toBeTruthy();
  });

  it('/oauth2/token: a burst of made-up codes (right secret) is held at LIMIT as well', async () => {
    const n = attackCount(30);
    heldAtLimit(
      await burst(n, () =>
        token(
          '127.0.1.6',
          `grant_type=authorization_code&code=sgw_ac_guess&redirect_uri=${encodeURIComponent(c().client.redirectUri)}`,
        ),
      ),
      400,
      n,
    );
    expect((await token('127.0.1.7', 'grant_type=client_credentials')).status).toBe(200);
  });

  it('/oauth2/token: a burst of made-up refresh tokens (right secret) is held at LIMIT as well', async () => {
    const n = attackCount(30);
    const replies = await burst(n, () => token('127.0.1.8', 'grant_type=refresh_token&refresh_token=sgw_rt_guess'));
    heldAtLimit(replies, 400, n);
    expect(replies.find((r) => r.status === 400)!.body.error).toBe('invalid_grant');
    expect((await token('127.0.1.9', 'grant_type=client_credentials')).status).toBe(200);
  });

  it('an address that used up its failures locks out neither the owner nor the partner at another address', async () => {
    for (let i = 0; i < LIMIT; i++) expect((await login('127.0.1.12', 'wrong-guess')).status).toBe(401);
    for (let i = 0; i < LIMIT; i++)
      expect((await token('127.0.1.13', 'grant_type=client_credentials', basic(c().client.id, 'wrong'))).status).toBe(
        401,
      );
    expect((await login('127.0.1.12', c().owner.password)).status).toBe(429);
    expect((await token('127.0.1.13', 'grant_type=client_credentials')).status).toBe(429);
    // a first visit from another address: not known to the limiter, and still let in
    expect((await login('127.0.1.14', c().owner.password)).status).toBe(303);
    expect((await decide('127.0.1.15', c().owner.password)).status).toBe(302);
    expect((await token('127.0.1.16', 'grant_type=client_credentials')).status).toBe(200);
  });

  it('the authorize page: before the owner signs in, a registered client, a wrong redirect URI and an unknown client look the same', async () => {
    const cases: Record<string, string>[] = [
      { client_id: c().client.id, redirect_uri: c().client.redirectUri },
      { client_id: c().client.id },
      { client_id: c().client.id, redirect_uri: 'https://attacker.example/cb' },
      { client_id: 'no-such-app', redirect_uri: c().client.redirectUri },
      { client_id: 'no-such-app' },
    ];
    // the request's own values come back in hidden fields; everything else must be the same
    const seen = (r: Reply) => ({
      status: r.status,
      type: r.headers['content-type'],
      location: r.headers.location,
      text: r.text.replace(/<input type="hidden"[^>]*>\n?/g, ''),
    });
    const pages: ReturnType<typeof seen>[] = [];
    const wrong: ReturnType<typeof seen>[] = [];
    for (const [i, q] of cases.entries()) {
      const page = await rawRequest({
        url: `${c().authorizeUrl}?${new URLSearchParams({ response_type: 'code', state: 's', ...q })}`,
        localAddress: `127.0.1.${30 + i}`,
      });
      pages.push(seen(page));
      const body = new URLSearchParams([
        ...parseForm(page.text).fields,
        ['username', c().owner.username],
        ['password', 'wrong-guess'],
        ['decision', 'sign-in'],
      ]).toString();
      wrong.push(
        seen(
          await rawRequest({
            method: 'POST',
            url: `${c().apiUrl}${consentAction}`,
            localAddress: `127.0.1.${30 + i}`,
            headers: FORM,
            body,
          }),
        ),
      );
    }
    expect(pages[0]).toMatchObject({ status: 200, location: undefined });
    expect(pages[0]!.text).not.toContain('Demo partner app');
    expect(wrong[0]).toMatchObject({ status: 401, location: undefined });
    for (let i = 1; i < cases.length; i++) {
      expect(pages[i]).toEqual(pages[0]);
      expect(wrong[i]).toEqual(wrong[0]);
    }
  });

  it('the consent page: of a burst of wrong owner passwords LIMIT are checked, the rest get 429; the owner consents from another address', async () => {
    const n = attackCount(30);
    const replies = await burst(n, () => decide('127.0.1.10', 'wrong-guess'));
    heldAtLimit(replies, 401, n);
    for (const r of replies) expect(r.headers.location).toBeUndefined();
    const owner = await decide('127.0.1.11', c().owner.password);
    expect(owner.status).toBe(302);
    expect(new URL(String(owner.headers.location)).searchParams.get('code')).toBeTruthy();
  });
});

describe('secret hashing is bounded and fair across addresses', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let creds: DemoCredentials;
  const c = () => creds;
  const FLOODERS = 8;

  beforeAll(async () => {
    // the failure limits are out of the way: only the hashing gate stands against the flood
    demo = await demoSite({
      log,
      configure: (cfg) => {
        cfg.auth.maxFailedAttempts = 10_000;
        openConnectionCaps(cfg);
      },
    });
    creds = await fullStrength(demo);
  });
  afterAll(async () => {
    await demo?.cleanup();
  });

  it('a flood of wrong secrets from several addresses gets 429 beyond its share, and a right secret from another address is served ahead of the flood', async () => {
    const perAddress = attackCount(10);
    const tokenFrom = (localAddress: string, secret: string) =>
      rawRequest({
        method: 'POST',
        url: c().tokenUrl,
        localAddress,
        headers: { ...FORM, authorization: basic(c().client.id, secret) },
        body: 'grant_type=client_credentials',
      });
    const arrived: { from: string; r: Reply }[] = [];
    const flood = Array.from({ length: FLOODERS }, (_, i) => `127.0.2.${2 + i}`).flatMap((addr) =>
      Array.from({ length: perAddress }, () => tokenFrom(addr, 'wrong').then((r) => arrived.push({ from: addr, r }))),
    );
    // the gate holds a long queue of flood checks: now the partner asks
    await waitFor(
      'the flood to queue up',
      () => demo.daemon.ctx.auth.hashing.waiting >= (FLOODERS * PI_HASHING.perAddress) / 2,
    );
    const queued = demo.daemon.ctx.auth.hashing.waiting;
    const partner = await tokenFrom('127.0.2.100', c().client.secret);
    const checkedBefore = arrived.filter((a) => a.r.status === 401).length;
    await Promise.all(flood);

    expect(partner.status).toBe(200);
    // addresses take turns: the partner waited for about one check per flooding address, not for the queue
    expect(checkedBefore).toBeLessThanOrEqual(FLOODERS + PI_HASHING.concurrency);
    expect(checkedBefore).toBeLessThan(queued);
    const checked = arrived.filter((a) => a.r.status === 401);
    expect(checked.length).toBeGreaterThan(checkedBefore);
    // each flooding address had at most its share of checks; the rest were refused at once
    for (let i = 0; i < FLOODERS; i++) {
      const mine = arrived.filter((a) => a.from === `127.0.2.${2 + i}`);
      expect(statuses(mine.map((a) => a.r))).toEqual({
        401: PI_HASHING.perAddress,
        429: perAddress - PI_HASHING.perAddress,
      });
      for (const a of mine.filter((x) => x.r.status === 429)) {
        expect(a.r.body.error).toBe('temporarily_unavailable');
        expect(Number(a.r.headers['retry-after'])).toBeGreaterThan(0);
      }
    }
  });
});
