/**
 * One error body for everything the server answers (issue 40 finding 7, issue 44 items 1 and 2):
 * `{statusCode,error,code,message}` with a sitegw code, never fastify's FST_ERR_*, also for what
 * node and fastify answer before a route runs. Before the fix `Content-Type: application/json`
 * with no body on DELETE, OPTIONS or PUT got 400 FST_ERR_CTP_EMPTY_JSON_BODY before the 405 and
 * before authorization (and broke the documented `curl -X DELETE -H 'Content-Type:
 * application/json' …/plan`), `{` got FST_ERR_CTP_INVALID_JSON_BODY, the token endpoint echoed
 * fastify's text as its error_description, and a URL over 16 KiB got a 431 without a code.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, partnerToken } from '../support/auth.js';
import { demoSite } from '../support/demo.js';

type Demo = Awaited<ReturnType<typeof demoSite>>;
const Q = 15 * 60_000;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** One request written as is on a fresh connection; the status, headers and the parsed body. */
function raw(
  port: number,
  head: string,
  body = '',
): Promise<{ status: number; headers: Record<string, string>; body: any; text: string }> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let text = '';
    s.on('data', (d: Buffer) => (text += d.toString('latin1')));
    s.on('error', reject);
    s.on('close', () => {
      const [h = '', b = ''] = text.split('\r\n\r\n', 2);
      const headers: Record<string, string> = {};
      for (const l of h.split('\r\n').slice(1)) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      let parsed: unknown = b;
      try {
        parsed = JSON.parse(b);
      } catch {
        // not JSON
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(h)?.[1] ?? 0), headers, body: parsed, text });
    });
    s.write(`${head}\r\nHost: g\r\nConnection: close\r\n\r\n${body}`);
  });
}

const SHAPE = {
  statusCode: expect.any(Number),
  error: expect.any(String),
  code: expect.stringMatching(/^[A-Z][A-Z_]+$/),
  message: expect.any(String),
};

describe('one error body for everything the server answers', () => {
  let d: Demo;
  let port: number;
  let token: string;
  beforeAll(async () => {
    d = await demoSite();
    port = Number(new URL(d.url).port);
    token = await partnerToken(d.credentials);
  }, 60_000);
  afterAll(async () => d?.cleanup());

  const JSON_CT = 'Content-Type: application/json';
  const auth = () => `Authorization: Bearer ${token}`;

  it('DELETE …/plan with the JSON header and no body deletes the plan (the documented curl)', async () => {
    const t = Math.ceil((Date.now() + 3_600_000) / Q) * Q;
    const put = await raw(
      port,
      `PUT /api/v1/devices/inverter/plan HTTP/1.1\r\n${auth()}\r\n${JSON_CT}\r\nContent-Length: 200`,
      JSON.stringify({ slots: [{ interval: `${iso(t)}/${iso(t + Q)}`, mode: 'hold' }] }).padEnd(200, ' '),
    );
    expect(put.status, put.text).toBe(200);
    const del = await raw(port, `DELETE /api/v1/devices/inverter/plan HTTP/1.1\r\n${auth()}\r\n${JSON_CT}`);
    expect(del.status, del.text).toBe(204);
    const again = await raw(
      port,
      `DELETE /api/v1/devices/inverter/plan HTTP/1.1\r\n${auth()}\r\n${JSON_CT}\r\nContent-Length: 0`,
    );
    expect(again.body).toMatchObject({ ...SHAPE, code: 'PLAN_NOT_FOUND' });
  });

  for (const method of ['DELETE', 'OPTIONS', 'PUT', 'PATCH', 'POST'])
    it(`${method} on a GET-only path with the JSON header and no body, without a token: 405 with Allow`, async () => {
      const r = await raw(port, `${method} /api/v1/sites HTTP/1.1\r\n${JSON_CT}`);
      expect(r.status, r.text).toBe(405);
      expect(r.headers.allow).toBe('GET, HEAD');
      expect(r.body).toMatchObject({ ...SHAPE, code: 'METHOD_NOT_ALLOWED' });
    });

  it('a wrong method with a broken JSON body is still 405, before the body is read', async () => {
    const r = await raw(port, `DELETE /api/v1/sites HTTP/1.1\r\n${JSON_CT}\r\nContent-Length: 1`, '{');
    expect(r.status, r.text).toBe(405);
  });

  it('PUT …/plan with the JSON header and no body: 400 with a sitegw code', async () => {
    const r = await raw(port, `PUT /api/v1/devices/inverter/plan HTTP/1.1\r\n${auth()}\r\n${JSON_CT}`);
    expect(r.status, r.text).toBe(400);
    expect(r.body).toMatchObject(SHAPE);
    expect(r.text).not.toContain('FST_');
  });

  it('a body of `{`: 400 INVALID_BODY', async () => {
    const r = await raw(
      port,
      `PUT /api/v1/devices/inverter/plan HTTP/1.1\r\n${auth()}\r\n${JSON_CT}\r\nContent-Length: 1`,
      '{',
    );
    expect(r.status, r.text).toBe(400);
    expect(r.body).toMatchObject({ ...SHAPE, code: 'INVALID_BODY' });
  });

  it('POST /login with the JSON header and no body: a sitegw code', async () => {
    const r = await raw(port, `POST /login HTTP/1.1\r\n${JSON_CT}`);
    expect(r.status, r.text).toBeGreaterThanOrEqual(400);
    expect(r.text).not.toContain('FST_');
  });

  it("the token endpoint's RFC 6749 error carries a sitegw description", async () => {
    const { id, secret } = d.credentials.client;
    for (const [ct, body] of [
      [JSON_CT, ''],
      [JSON_CT, '{'],
    ] as const) {
      const r = await raw(
        port,
        `POST /oauth2/token HTTP/1.1\r\nAuthorization: ${basic(id, secret)}\r\n${ct}\r\nContent-Length: ${body.length}`,
        body,
      );
      expect(r.status, r.text).toBe(400);
      expect(r.body.error).toBe('invalid_request');
      expect(r.body.error_description).not.toMatch(/FST_|Body cannot be empty|Unexpected/);
    }
  });

  it('a URL over 16 KiB: 431 with the error body and a code', async () => {
    const r = await raw(port, `GET /api/v1/sites?x=${'a'.repeat(17_000)} HTTP/1.1`);
    expect(r.status).toBe(431);
    expect(r.body).toMatchObject({ ...SHAPE, statusCode: 431, code: 'HEADERS_TOO_LARGE' });
  });

  it('a request node cannot parse: 400 with the error body and a code', async () => {
    const r = await raw(port, 'GET /api/v1/sites HTTP/9.9');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ ...SHAPE, code: 'BAD_REQUEST' });
  });
});
