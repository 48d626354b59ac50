/**
 * Abuse limits over real HTTP: failed token attempts are counted per address and per client
 * (connections come from different loopback source addresses, so the two are told apart),
 * failed owner logins per address and for the owner account; a blocked key gets 429 with
 * Retry-After until the window has passed, on the token service's own clock. An identity's own
 * key takes IDENTITY_SPREAD times the address limit, and an address where the identity
 * succeeded is exempt from it (src/auth/rate-limit.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addClient } from '../../src/auth/clients.js';
import { IDENTITY_SPREAD } from '../../src/auth/rate-limit.js';
import { basic, FORM, parseForm, rawRequest } from '../support/auth.js';
import { demoSite } from '../support/demo.js';

const LIMIT = 3;
const WINDOW_S = 60;

describe('failed attempts are limited', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let shiftMs = 0;
  let other: string;

  const tokenFrom = (localAddress: string, id: string, secret: string) =>
    rawRequest({
      method: 'POST',
      url: demo.credentials.tokenUrl,
      localAddress,
      headers: { ...FORM, authorization: basic(id, secret) },
      body: 'grant_type=client_credentials',
    });

  beforeAll(async () => {
    demo = await demoSite({
      speed: 60,
      configure: (c) => {
        c.auth.maxFailedAttempts = LIMIT;
        c.auth.failureWindowSeconds = WINDOW_S;
      },
      authNow: () => Date.now() + shiftMs,
    });
    other = (await addClient(demo.daemon.ctx.db, { id: 'other-partner' }, Date.now())).secret!;
  });
  afterAll(async () => {
    await demo?.cleanup();
  });

  it('per client: wrong secrets spread over several addresses block that client for new addresses, not where it succeeded, nor other clients, until the window passes', async () => {
    const { id, secret } = demo.credentials.client;
    expect((await tokenFrom('127.0.0.13', id, secret)).status).toBe(200);
    for (let n = 0; n < IDENTITY_SPREAD; n++)
      for (let i = 0; i < LIMIT; i++) expect((await tokenFrom(`127.0.0.${2 + n}`, id, 'wrong')).status).toBe(401);
    const blocked = await tokenFrom('127.0.0.5', id, secret);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error).toBe('temporarily_unavailable');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(WINDOW_S);
    // the address the client succeeded from before: fine
    expect((await tokenFrom('127.0.0.13', id, secret)).status).toBe(200);
    // the same address, another client: fine
    expect((await tokenFrom('127.0.0.5', 'other-partner', other)).status).toBe(200);
    shiftMs += (WINDOW_S + 1) * 1000;
    expect((await tokenFrom('127.0.0.5', id, secret)).status).toBe(200);
  });

  it('per address: guesses at many client ids from one address block that address, not the clients', async () => {
    for (let i = 0; i < LIMIT; i++) expect((await tokenFrom('127.0.0.6', `guess-${i}`, 'x')).status).toBe(401);
    expect((await tokenFrom('127.0.0.6', 'other-partner', other)).status).toBe(429);
    expect((await tokenFrom('127.0.0.7', 'other-partner', other)).status).toBe(200);
    // bad codes count as failures too
    for (let i = 0; i < LIMIT; i++) {
      const r = await rawRequest({
        method: 'POST',
        url: demo.credentials.tokenUrl,
        localAddress: '127.0.0.8',
        headers: { ...FORM, authorization: basic('other-partner', other) },
        body: `grant_type=authorization_code&code=sgw_ac_guess${i}`,
      });
      expect(r.body.error).toBe('invalid_grant');
    }
    expect((await tokenFrom('127.0.0.8', 'other-partner', other)).status).toBe(429);
    shiftMs += (WINDOW_S + 1) * 1000;
  });

  it('owner logins: wrong passwords spread over several addresses block the account on the consent page for new addresses, not where the owner signed in before, until the window passes', async () => {
    const c = demo.credentials;
    const page = await rawRequest({ url: `${c.authorizeUrl}?response_type=code&client_id=${c.client.id}&state=s` });
    const form = parseForm(page.text);
    const submit = (localAddress: string, password: string) =>
      rawRequest({
        method: 'POST',
        url: `${c.apiUrl}${form.action}`,
        localAddress,
        headers: FORM,
        body: new URLSearchParams([
          ...form.fields,
          ['username', c.owner.username],
          ['password', password],
          ['decision', 'allow'],
        ]).toString(),
      });
    expect((await submit('127.0.0.14', c.owner.password)).status).toBe(302);
    for (let n = 0; n < IDENTITY_SPREAD; n++)
      for (let i = 0; i < LIMIT; i++) expect((await submit(`127.0.0.${20 + n}`, 'guess')).status).toBe(401);
    const blocked = await submit('127.0.0.12', c.owner.password);
    expect(blocked.status).toBe(429);
    expect(blocked.text).toContain('Too many failed attempts');
    expect(blocked.headers.location).toBeUndefined();
    expect((await submit('127.0.0.14', c.owner.password)).status).toBe(302);
    shiftMs += (WINDOW_S + 1) * 1000;
    const ok = await submit('127.0.0.12', c.owner.password);
    expect(ok.status).toBe(302);
    expect(new URL(String(ok.headers.location)).searchParams.get('code')).toBeTruthy();
  });
});
