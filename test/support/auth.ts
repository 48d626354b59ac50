import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { DemoCredentials } from '../../src/demo/credentials.js';

export const basic = (id: string, secret: string): string => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
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
export async function postForm(url: string, fields: Record<string, string> | [string, string][], headers: Record<string, string> = {}): Promise<HttpResult> {
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
  const r = await postForm(c.tokenUrl, { grant_type: 'client_credentials', ...(scope ? { scope } : {}) }, { authorization: basic(c.client.id, c.client.secret) });
  if (r.status !== 200) throw new Error(`token request failed: ${r.status} ${r.text}`);
  return r.body.access_token as string;
}

/** GET over HTTPS trusting one certificate (fetch cannot be given a CA). */
export function httpsGet(url: string, ca: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, headers }, (res) => {
      // read while the socket is still attached to the response
      const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, body, fingerprint });
      });
    });
    req.on('error', reject);
    req.end();
  });
}
