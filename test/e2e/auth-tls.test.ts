/**
 * HTTPS end to end: the token flow and an API call over TLS with the self-signed certificate the
 * gateway made on first start (trusted by its file, as a partner pinning it would), the same
 * certificate after a restart, an installer's own certificate, and a key that does not fit.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSelfSigned } from '../../src/api/http/self-signed.js';
import { basic, FORM, rawRequest } from '../support/auth.js';
import { demoSite } from '../support/demo.js';

describe('HTTPS', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('with the self-signed certificate: token and API over TLS, the fingerprint the demo reports, kept across restarts', async () => {
    const demo = await demoSite({ speed: 60, configure: (c) => void (c.http.tls.mode = 'always') });
    cleanups.push(() => demo.cleanup());
    const c = demo.credentials;
    expect(demo.url.startsWith('https://127.0.0.1:')).toBe(true);
    expect(c.tls).toBeDefined();
    const ca = readFileSync(c.tls!.certFile, 'utf8');
    expect(new X509Certificate(ca).fingerprint256).toBe(c.tls!.fingerprint);

    const tok = await rawRequest({
      method: 'POST',
      url: c.tokenUrl,
      ca,
      headers: { ...FORM, authorization: basic(c.client.id, c.client.secret) },
      body: 'grant_type=client_credentials',
    });
    expect(tok.status).toBe(200);
    expect(tok.fingerprint).toBe(c.tls!.fingerprint);
    const sites = await rawRequest({
      url: `${c.apiUrl}/api/v1/sites`,
      ca,
      headers: { authorization: `Bearer ${tok.body.access_token}` },
    });
    expect(sites.status).toBe(200);
    // without trusting the certificate a client refuses the connection
    await expect(rawRequest({ url: `${c.apiUrl}/api/v1/sites` })).rejects.toThrow(/self-signed|self signed/);

    await demo.restartDaemon();
    const again = await rawRequest({
      url: `${demo.url}/api/v1/sites`,
      ca,
      headers: { authorization: `Bearer ${tok.body.access_token}` },
    });
    expect(again.status).toBe(200);
    expect(again.fingerprint).toBe(c.tls!.fingerprint);
  });

  it("with the installer's certificate and key", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sitegw-tls-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const pair = createSelfSigned(['gateway.example', '127.0.0.1']);
    writeFileSync(join(dir, 'cert.pem'), pair.certPem);
    writeFileSync(join(dir, 'key.pem'), pair.keyPem);
    const demo = await demoSite({
      speed: 60,
      configure: (c) => {
        c.http.tls = { mode: 'always', cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
      },
    });
    cleanups.push(() => demo.cleanup());
    const r = await rawRequest({ url: `${demo.url}/oauth2/jwks`, ca: pair.certPem });
    expect(r.status).toBe(200);
    expect(r.fingerprint).toBe(new X509Certificate(pair.certPem).fingerprint256);
  });

  it('refuses to start with a key that is not the certificate’s, saying which files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sitegw-tls-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'cert.pem'), createSelfSigned(['a']).certPem);
    writeFileSync(join(dir, 'key.pem'), createSelfSigned(['b']).keyPem);
    const start = demoSite({
      speed: 60,
      configure: (c) => {
        c.http.tls = { mode: 'always', cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
      },
    });
    await expect(start).rejects.toThrow(
      `${join(dir, 'key.pem')} is not the key of the certificate ${join(dir, 'cert.pem')}`,
    );
    writeFileSync(join(dir, 'key.pem'), 'not a key');
    await expect(
      demoSite({
        speed: 60,
        configure: (c) =>
          void (c.http.tls = { mode: 'always', cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') }),
      }),
    ).rejects.toThrow(/is not a PEM private key/);
  });
});
