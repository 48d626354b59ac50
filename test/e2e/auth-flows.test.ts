/**
 * Every token flow end to end over real HTTP against a running daemon on the simulated site:
 * partner client credentials, the customer's authorization-code flow driven through the consent
 * page like a browser, PKCE, the id_token checked against the served keys, refresh rotation,
 * publishTo granted with the customer token. The daemon logs at trace level into memory, and the
 * last test proves that no secret, code or token ever reached a log line.
 */
import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addClient } from '../../src/auth/clients.js';
import { publishAudit } from '../../src/store/publish-to.js';
import {
  basic,
  bearer,
  consent,
  get,
  type HttpResult,
  parseForm,
  partnerToken,
  postForm,
  redirectParams,
} from '../support/auth.js';
import { demoSite } from '../support/demo.js';

const logLines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    logLines.push(chunk.toString());
    done();
  },
});

/** every secret value the test sees, to look for in the log at the end */
const secrets = new Set<string>();
const keep = <T extends string | undefined>(v: T): T => {
  if (v) secrets.add(v);
  return v;
};

const b64url = (b: Buffer) => b.toString('base64url');
function pkcePair(): { verifier: string; challenge: string } {
  const verifier = keep(b64url(randomBytes(48)));
  return { verifier, challenge: b64url(createHash('sha256').update(verifier).digest()) };
}

function decodeJwt(jwt: string): { header: any; claims: any; signed: Buffer; signature: Buffer } {
  const [h, p, s] = jwt.split('.') as [string, string, string];
  return {
    header: JSON.parse(Buffer.from(h, 'base64url').toString()),
    claims: JSON.parse(Buffer.from(p, 'base64url').toString()),
    signed: Buffer.from(`${h}.${p}`),
    signature: Buffer.from(s, 'base64url'),
  };
}

describe('token flows over real HTTP', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  const api = () => demo.credentials.apiUrl;
  const owner = () => demo.credentials.owner;
  const client = () => demo.credentials.client;

  beforeAll(async () => {
    demo = await demoSite({ speed: 60, history: 'PT1H', log: pino({ level: 'trace' }, sink) });
    keep(client().secret);
    keep(owner().password);
    keep(Buffer.from(`${client().id}:${client().secret}`).toString('base64'));
  });
  afterAll(async () => {
    await demo?.cleanup();
  });

  /**
   * The authorization request as a browser walks it: the sign-in page (nothing about the app), the
   * owner's password, the consent page (the app and what it asks), the button.
   */
  async function browserConsent(
    query: Record<string, string>,
    decision: 'allow' | 'deny',
  ): Promise<{ signIn: HttpResult; page: HttpResult; answer: HttpResult; form: [string, string][] }> {
    const signIn = await get(`${api()}/oauth2/authorize?${new URLSearchParams(query)}`);
    expect(signIn.status).toBe(200);
    const first = parseForm(signIn.text);
    const page = await postForm(new URL(first.action, api()).toString(), [
      ...first.fields,
      ['username', owner().username],
      ['password', owner().password],
      ['decision', 'sign-in'],
    ]);
    expect(page.status).toBe(200);
    const second = parseForm(page.text);
    const form: [string, string][] = [...second.fields, ['decision', decision]];
    const answer = await postForm(new URL(second.action, api()).toString(), form);
    return { signIn, page, answer, form };
  }

  it('partner: client credentials with HTTP Basic, grant_type in the query as the spec sends it', async () => {
    const r = await postForm(
      `${demo.credentials.tokenUrl}?grant_type=client_credentials`,
      {},
      { authorization: basic(client().id, client().secret) },
    );
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('pragma')).toBe('no-cache');
    expect(r.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: client().scopes.join(' '),
    });
    keep(r.body.access_token);
    const sites = await get(`${api()}/api/v1/sites`, bearer(r.body.access_token));
    expect(sites.status).toBe(200);
    expect(sites.body.sites[0].siteId).toBe(demo.siteId);

    // the same in the form body, asking for less than the client may have
    const narrow = await postForm(
      demo.credentials.tokenUrl,
      { grant_type: 'client_credentials', scope: 'device.read' },
      { authorization: basic(client().id, client().secret) },
    );
    expect(narrow.status).toBe(200);
    expect(narrow.body.scope).toBe('svc/device.read');
    keep(narrow.body.access_token);
    const patch = await fetch(`${api()}/api/v1/devices/inverter`, {
      method: 'PATCH',
      headers: { ...bearer(narrow.body.access_token), 'content-type': 'application/json' },
      body: '{"publishTo":[]}',
    });
    expect(patch.status).toBe(403);
  });

  it('customer: consent page in a browser, 302 with code and state, code + PKCE verifier for tokens, id_token signed with the served key', async () => {
    const { verifier, challenge } = pkcePair();
    const state = b64url(randomBytes(12));
    const nonce = b64url(randomBytes(12));
    const { signIn, page, answer } = await browserConsent(
      {
        response_type: 'code',
        client_id: client().id,
        redirect_uri: client().redirectUri,
        state,
        scope: 'svc/device.read svc/device.write',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        nonce,
      },
      'allow',
    );
    for (const p of [signIn, page]) {
      expect(p.headers.get('content-type')).toMatch(/^text\/html/);
      expect(p.headers.get('x-frame-options')).toBe('DENY');
      expect(p.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
    // the app is named only once the owner has signed in
    expect(signIn.text).not.toContain('Demo partner app');
    expect(page.text).toContain('Demo partner app');
    expect(page.text).toContain('svc/device.write');
    expect(parseForm(page.text).inputs).not.toContain('password');

    expect(answer.status).toBe(302);
    const back = redirectParams(answer.headers.get('location'));
    expect(answer.headers.get('location')!.startsWith(`${client().redirectUri}?`)).toBe(true);
    expect(back.get('state')).toBe(state);
    const code = keep(back.get('code')!);
    expect(code).toBeTruthy();

    const tok = await postForm(
      demo.credentials.tokenUrl,
      {
        grant_type: 'authorization_code',
        client_id: client().id,
        code,
        redirect_uri: client().redirectUri,
        code_verifier: verifier,
      },
      { authorization: basic(client().id, client().secret) },
    );
    expect(tok.status).toBe(200);
    expect(tok.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(tok.body).sort()).toEqual([
      'access_token',
      'expires_in',
      'id_token',
      'refresh_token',
      'scope',
      'token_type',
    ]);
    expect(tok.body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'svc/device.read svc/device.write',
    });
    for (const k of ['access_token', 'refresh_token', 'id_token']) keep(tok.body[k]);

    // the id_token verifies with the key from /oauth2/jwks, and says who, for whom, until when
    const jwks = await get(`${api()}/oauth2/jwks`);
    expect(jwks.status).toBe(200);
    const jwt = decodeJwt(tok.body.id_token);
    expect(jwt.header).toEqual({ alg: 'ES256', typ: 'JWT', kid: jwks.body.keys[0].kid });
    const key = createPublicKey({ key: jwks.body.keys[0], format: 'jwk' });
    expect(verify('sha256', jwt.signed, { key, dsaEncoding: 'ieee-p1363' }, jwt.signature)).toBe(true);
    const tampered = Buffer.from(jwt.signed.toString().replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')));
    expect(verify('sha256', tampered, { key, dsaEncoding: 'ieee-p1363' }, jwt.signature)).toBe(false);
    expect(jwt.claims).toMatchObject({
      aud: client().id,
      nonce,
      sub: 'owner',
      site_id: demo.siteId,
      iss: `urn:sitegw:${demo.siteId}`,
    });
    expect(jwt.claims.exp - jwt.claims.iat).toBe(3600);
    expect(Math.abs(jwt.claims.iat * 1000 - Date.now())).toBeLessThan(120_000);

    // the customer token sees the whole site and may set publishTo
    const devices = await get(`${api()}/api/v1/devices`, bearer(tok.body.access_token));
    expect(devices.body.devices.map((d: { deviceId: string }) => d.deviceId).sort()).toEqual(
      [...demo.daemon.site.devices.keys()].sort(),
    );
    const grant = [{ clientId: client().id, data: ['telemetry-realtime'] }];
    const patch = await fetch(`${api()}/api/v1/devices/grid-meter`, {
      method: 'PATCH',
      headers: { ...bearer(tok.body.access_token), 'content-type': 'application/json' },
      body: JSON.stringify({ publishTo: grant }),
    });
    expect(patch.status).toBe(200);
    expect(((await patch.json()) as { publishTo: unknown }).publishTo).toEqual(grant);
    const listed = await get(`${api()}/api/v1/devices`, bearer(tok.body.access_token));
    expect(listed.body.devices.find((d: { deviceId: string }) => d.deviceId === 'grid-meter').publishTo).toEqual(grant);
    expect(listed.body.devices.find((d: { deviceId: string }) => d.deviceId === 'inverter').publishTo).toEqual([]);
    // a sensor id names its device; the list is replaced whole and each change is audited
    const clear = await fetch(`${api()}/api/v1/devices/grid-meter__GRID_METER_DERIVED`, {
      method: 'PATCH',
      headers: { ...bearer(tok.body.access_token), 'content-type': 'application/json' },
      body: JSON.stringify({ publishTo: [] }),
    });
    expect(clear.status).toBe(200);
    const audit = publishAudit(demo.daemon.ctx.db, 'grid-meter');
    expect(audit.map((a) => [a.byClient, a.before, a.after])).toEqual([
      [client().id, [], grant],
      [client().id, grant, []],
    ]);
    expect(logLines.some((l) => l.includes('"msg":"publishTo changed"') && l.includes('"deviceId":"grid-meter"'))).toBe(
      true,
    );

    // refresh: a new pair, the old refresh token spent
    const refreshed = await postForm(
      demo.credentials.tokenUrl,
      { grant_type: 'refresh_token', client_id: client().id, refresh_token: tok.body.refresh_token },
      { authorization: basic(client().id, client().secret) },
    );
    expect(refreshed.status).toBe(200);
    for (const k of ['access_token', 'refresh_token', 'id_token']) keep(refreshed.body[k]);
    expect(refreshed.body.refresh_token).not.toBe(tok.body.refresh_token);
    expect(refreshed.body.scope).toBe('svc/device.read svc/device.write');
    expect((await get(`${api()}/api/v1/devices`, bearer(refreshed.body.access_token))).status).toBe(200);
    // a narrower scope on refresh is fine
    const narrower = await postForm(
      demo.credentials.tokenUrl,
      { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, scope: 'svc/device.read' },
      { authorization: basic(client().id, client().secret) },
    );
    expect(narrower.status).toBe(200);
    keep(narrower.body.access_token);
    keep(narrower.body.refresh_token);
    expect(narrower.body.scope).toBe('svc/device.read');
  });

  it('customer: Deny sends the owner back with access_denied and no code; the consent form works once', async () => {
    const { answer, form } = await browserConsent(
      { response_type: 'code', client_id: client().id, state: 'xyz' },
      'deny',
    );
    expect(answer.status).toBe(302);
    const back = redirectParams(answer.headers.get('location'));
    expect(back.get('error')).toBe('access_denied');
    expect(back.get('state')).toBe('xyz');
    expect(back.get('code')).toBeNull();
    const again = await postForm(
      `${api()}/oauth2/authorize`,
      form.map(([k, v]): [string, string] => [k, k === 'decision' ? 'allow' : v]),
    );
    expect(again.status).toBe(400);
    expect(again.headers.get('location')).toBeNull();
    expect(again.text).toContain('expired');
  });

  it('customer: a wrong password shows the form again with a message, and no redirect', async () => {
    const { answer } = await consent({
      apiUrl: api(),
      query: { response_type: 'code', client_id: client().id, state: 's' },
      username: owner().username,
      password: 'not-the-password',
    });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('location')).toBeNull();
    expect(answer.text).toContain('Wrong user name or password');
    expect(answer.text).toContain('<form');
  });

  it('public client: PKCE is required; with it the code is exchanged without a secret', async () => {
    await addClient(
      demo.daemon.ctx.db,
      {
        id: 'phone-app',
        name: 'Phone app',
        public: true,
        redirectUris: ['com.example.phone:/oauth'],
        scopes: ['svc/device.read'],
      },
      Date.now(),
    );
    const without = await consent({
      apiUrl: api(),
      query: { response_type: 'code', client_id: 'phone-app', state: 'p1' },
      ...owner(),
    });
    expect(without.answer.status).toBe(302);
    const refused = redirectParams(without.answer.headers.get('location'));
    expect(refused.get('error')).toBe('invalid_request');
    expect(refused.get('error_description')).toContain('PKCE');
    expect(refused.get('state')).toBe('p1');

    const { verifier, challenge } = pkcePair();
    const { answer } = await consent({
      apiUrl: api(),
      query: {
        response_type: 'code',
        client_id: 'phone-app',
        state: 'p2',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      },
      ...owner(),
    });
    const location = answer.headers.get('location')!;
    expect(location.startsWith('com.example.phone:/oauth?')).toBe(true);
    const code = keep(redirectParams(location).get('code')!);
    const tok = await postForm(demo.credentials.tokenUrl, {
      grant_type: 'authorization_code',
      client_id: 'phone-app',
      code,
      code_verifier: verifier,
    });
    expect(tok.status).toBe(200);
    expect(tok.body.scope).toBe('svc/device.read');
    for (const k of ['access_token', 'refresh_token', 'id_token']) keep(tok.body[k]);
    const again = await postForm(demo.credentials.tokenUrl, {
      grant_type: 'refresh_token',
      client_id: 'phone-app',
      refresh_token: tok.body.refresh_token,
    });
    expect(again.status).toBe(200);
    keep(again.body.access_token);
    keep(again.body.refresh_token);
    // a public client has no secret, so it cannot act as a partner
    const cc = await postForm(demo.credentials.tokenUrl, { grant_type: 'client_credentials', client_id: 'phone-app' });
    expect(cc.status).toBe(400);
    expect(cc.body.error).toBe('unauthorized_client');
  });

  it('the helper the other tests use gets a partner token too', async () => {
    keep(await partnerToken(demo.credentials));
  });

  it('never writes a secret, password, code, verifier or token to the log, even at trace level', () => {
    expect(secrets.size).toBeGreaterThan(15);
    const log = logLines.join('');
    // the capture works: the token requests and the failed login are there
    expect(log).toContain('"path":"/oauth2/token"');
    expect(log).toContain('wrong owner user name or password');
    const leaked = [...secrets].filter((s) => log.includes(s));
    expect(leaked).toEqual([]);
  });
});
