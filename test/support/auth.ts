import { createHash, randomBytes } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { addClient } from '../../src/auth/clients.js';
import { request as httpRequest } from '../../src/core/node-http.js';
import type { DemoCredentials } from '../../src/demo/credentials.js';
import type { Demo } from '../../src/demo/demo.js';

export const basic = (id: string, secret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
export const bearer = (token: string): { authorization: string } => ({ authorization: `Bearer ${token}` });

export interface HttpResult {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

async function result(res: Response): Promise<HttpResult> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // HTML pages and empty bodies stay text
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** POST a form the way a browser or an OAuth client library does; redirects are returned, not followed. */
export async function postForm(
  url: string,
  fields: Record<string, string> | [string, string][],
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  return result(res);
}

export async function get(url: string, headers: Record<string, string> = {}): Promise<HttpResult> {
  return result(await fetch(url, { headers, redirect: 'manual' }));
}

/** A partner token for the demo client (client credentials over real HTTP). */
export async function partnerToken(c: DemoCredentials, scope?: string): Promise<string> {
  const r = await postForm(
    c.tokenUrl,
    { grant_type: 'client_credentials', ...(scope ? { scope } : {}) },
    { authorization: basic(c.client.id, c.client.secret) },
  );
  if (r.status !== 200) throw new Error(`token request failed: ${r.status} ${r.text}`);
  return r.body.access_token as string;
}

export interface RawRequest {
  method?: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** source address of the connection, e.g. 127.0.0.2: the gateway sees another client address */
  localAddress?: string;
  /** trust this certificate (HTTPS with a self-signed certificate; fetch cannot be given a CA) */
  ca?: string;
}

/** One request over node:http(s), for what fetch cannot do: a chosen source address or CA. */
export function rawRequest(r: RawRequest): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
  fingerprint?: string;
}> {
  const u = new URL(r.url);
  const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      u,
      { method: r.method ?? 'GET', headers: r.headers, localAddress: r.localAddress, ca: r.ca },
      (res) => {
        // read while the socket is still attached to the response
        const socket = res.socket as TLSSocket;
        const fingerprint =
          typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate().fingerprint256 : undefined;
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text, fingerprint });
        });
      },
    );
    req.on('error', reject);
    req.end(r.body);
  });
}

/** GET over HTTPS trusting one certificate. */
export async function httpsGet(
  url: string,
  ca: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; fingerprint: string }> {
  const r = await rawRequest({ url, ca, headers });
  return { status: r.status, body: r.body, fingerprint: r.fingerprint ?? '' };
}

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

const unescapeHtml = (s: string): string =>
  s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);

/** The consent page's form as a browser sees it: where it posts and the fields it carries. */
export function parseForm(html: string): {
  action: string;
  method: string;
  fields: [string, string][];
  inputs: string[];
} {
  const form = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) throw new Error(`no form in page: ${html.slice(0, 300)}`);
  const attr = (tag: string, name: string) => {
    const m = new RegExp(`\\b${name}="([^"]*)"`, 'i').exec(tag);
    return m ? unescapeHtml(m[1]!) : undefined;
  };
  const fields: [string, string][] = [];
  const inputs: string[] = [];
  for (const m of form[2]!.matchAll(/<input\b([^>]*)>/gi)) {
    const name = attr(m[1]!, 'name');
    if (!name) continue;
    inputs.push(name);
    if (attr(m[1]!, 'type') === 'hidden') fields.push([name, attr(m[1]!, 'value') ?? '']);
  }
  return {
    action: attr(form[1]!, 'action') ?? '',
    method: (attr(form[1]!, 'method') ?? 'get').toLowerCase(),
    fields,
    inputs,
  };
}

export interface ConsentInput {
  apiUrl: string;
  /** the authorization request's query parameters */
  query: Record<string, string>;
  username: string;
  password: string;
  decision?: 'allow' | 'deny' | 'sign-in';
}

/**
 * Drives the login-and-consent page like a browser: GET the authorization URL, read the form,
 * fill in the owner's credentials, submit it with the chosen button. Returns the page and the
 * answer to the submission (a 302 on success).
 */
export async function consent(input: ConsentInput): Promise<{ page: HttpResult; answer: HttpResult }> {
  const page = await get(`${input.apiUrl}/oauth2/authorize?${new URLSearchParams(input.query)}`);
  if (page.status !== 200) return { page, answer: page };
  const form = parseForm(page.text);
  const fields: [string, string][] = [
    ...form.fields,
    ['username', input.username],
    ['password', input.password],
    ['decision', input.decision ?? 'allow'],
  ];
  const answer = await postForm(new URL(form.action, input.apiUrl).toString(), fields);
  return { page, answer };
}

/** code and state (or error) of the redirect to the client */
export function redirectParams(location: string | null): URLSearchParams {
  if (!location) throw new Error('no Location header');
  return new URL(location).searchParams;
}

/**
 * A customer grant for the demo client: the owner consents on the page (PKCE), the code is
 * exchanged. Returns the token response (access_token, refresh_token, ...).
 */
export async function customerTokens(
  c: DemoCredentials,
  scope = 'svc/device.read',
): Promise<{ access_token: string; refresh_token: string }> {
  const verifier = randomBytes(40).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const { answer } = await consent({
    apiUrl: c.apiUrl,
    query: {
      response_type: 'code',
      client_id: c.client.id,
      redirect_uri: c.client.redirectUri,
      state: 's',
      scope,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    },
    ...c.owner,
  });
  const code = redirectParams(answer.headers.get('location')).get('code');
  if (!code) throw new Error(`consent gave no code: ${answer.status} ${answer.text}`);
  const r = await postForm(
    c.tokenUrl,
    { grant_type: 'authorization_code', code, redirect_uri: c.client.redirectUri, code_verifier: verifier },
    { authorization: basic(c.client.id, c.client.secret) },
  );
  if (r.status !== 200) throw new Error(`code exchange failed: ${r.status} ${r.text}`);
  return r.body;
}

/** The full answer of an authorization-code exchange for the demo owner, read and write by default. */
export const ownerTokens = (c: DemoCredentials, scope = 'svc/device.read svc/device.write'): Promise<any> =>
  customerTokens(c, scope);

/** A customer (site owner) access token through the authorization code flow. */
export const ownerToken = async (c: DemoCredentials, scope?: string): Promise<string> =>
  (await ownerTokens(c, scope)).access_token as string;

/** Registers a partner client given `devices` on the demo daemon and returns its access token. */
export async function clientToken(demo: Demo, id: string, devices: string[], scopes?: string[]): Promise<string> {
  const { secret } = await addClient(
    demo.daemon.ctx.db,
    { id, devices, ...(scopes ? { scopes } : {}) },
    Date.now(),
    new Set(demo.daemon.site.devices.keys()),
  );
  return (
    await postForm(
      demo.credentials.tokenUrl,
      { grant_type: 'client_credentials' },
      { authorization: basic(id, secret!) },
    )
  ).body.access_token;
}
