/** The small pieces the token service stands on, each against an outside reference where one exists. */
import { createPublicKey, verify, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSelfSigned } from '../../src/api/http/self-signed.js';
import { IdTokenSigner } from '../../src/auth/id-token.js';
import { s256, verifierMatches } from '../../src/auth/pkce.js';
import { parseScopeParam, ScopeError } from '../../src/auth/scopes.js';
import { hashSecret, safeEqual, verifySecret } from '../../src/auth/secrets.js';
import { rawRequest } from '../support/auth.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'sitegw-auth-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('PKCE S256', () => {
  it('matches the example of RFC 7636 Appendix B', () => {
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    expect(s256(verifier)).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
    expect(verifierMatches(verifier, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')).toBe(true);
    expect(verifierMatches(`${verifier.slice(0, -1)}l`, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')).toBe(false);
  });

  it('refuses verifiers outside 43..128 unreserved characters, even when the hash would match', () => {
    const short = 'a'.repeat(42);
    expect(verifierMatches(short, s256(short))).toBe(false);
    const spaced = `${'a'.repeat(42)} `;
    expect(verifierMatches(spaced, s256(spaced))).toBe(false);
    const long = 'a'.repeat(129);
    expect(verifierMatches(long, s256(long))).toBe(false);
  });
});

describe('scopes', () => {
  it('reads the svc/ spelling and the bare one alike, in a fixed order, without duplicates', () => {
    expect(parseScopeParam('device.write svc/device.read  svc/device.write openid')).toEqual([
      'svc/device.read',
      'svc/device.write',
      'openid',
    ]);
  });
  it('names the first unknown scope', () => {
    expect(() => parseScopeParam('svc/device.read svc/device.admin')).toThrow(ScopeError);
    expect(() => parseScopeParam('svc/device.read svc/device.admin')).toThrow(/'svc\/device.admin'/);
    expect(() => parseScopeParam('   ')).toThrow(/empty/);
    expect(() => parseScopeParam('other/device.read')).toThrow(/unknown scope/);
  });
});

describe('secrets', () => {
  it('stores a scrypt hash with its parameters and verifies only the right secret', async () => {
    const h = await hashSecret('correct horse');
    expect(h).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(h).not.toContain('correct horse');
    expect(await verifySecret('correct horse', h)).toBe(true);
    expect(await verifySecret('correct hors', h)).toBe(false);
    expect(await hashSecret('correct horse')).not.toBe(h); // salted
  });
  it('hashes the demo credentials at their own, lower strength, which verifies like any other', async () => {
    const h = await hashSecret('demo secret', 'demo');
    expect(h).toMatch(/^scrypt\$4096\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(await verifySecret('demo secret', h)).toBe(true);
    expect(await verifySecret('demo secre', h)).toBe(false);
  });
  it('answers false, after the same work, for a missing or mangled hash', async () => {
    expect(await verifySecret('x', undefined)).toBe(false);
    expect(await verifySecret('x', null)).toBe(false);
    expect(await verifySecret('x', 'plain-text-secret')).toBe(false);
  });
  it('compares strings of different lengths without throwing', () => {
    expect(safeEqual('owner', 'owner')).toBe(true);
    expect(safeEqual('owner', 'owners')).toBe(false);
    expect(safeEqual('', 'a')).toBe(false);
  });
});

describe('id_token signing key', () => {
  it('is created once (0600), reused, and signs JWTs that verify with its JWK', () => {
    const file = join(tmp(), 'auth', 'key.pem');
    const a = IdTokenSigner.loadOrCreate(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const b = IdTokenSigner.loadOrCreate(file);
    expect(b.jwk).toEqual(a.jwk);
    expect(a.jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    const jwt = a.sign({ iss: 'i', sub: 'owner', aud: 'app', iat: 1, exp: 2, auth_time: 1, site_id: 's' });
    const [h, p, s] = jwt.split('.') as [string, string, string];
    const key = createPublicKey({ key: { kty: a.jwk.kty, crv: a.jwk.crv, x: a.jwk.x, y: a.jwk.y }, format: 'jwk' });
    expect(
      verify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url')),
    ).toBe(true);
    expect(JSON.parse(Buffer.from(p, 'base64url').toString())).toEqual({
      iss: 'i',
      sub: 'owner',
      aud: 'app',
      iat: 1,
      exp: 2,
      auth_time: 1,
      site_id: 's',
    });
  });
  it('refuses a key file that is not a P-256 key', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const { writeFileSync } = await import('node:fs');
    const file = join(tmp(), 'rsa.pem');
    writeFileSync(
      file,
      generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
    );
    expect(() => IdTokenSigner.loadOrCreate(file)).toThrow(/not a P-256 private key/);
  });
});

describe('self-signed certificate', () => {
  it('is a v3 certificate Node parses and verifies, with the names as subjectAltName', () => {
    const names = ['sitegw-home', 'gateway.local', '192.168.1.20', '127.0.0.1', 'fe80::1:2', '::1'];
    const pair = createSelfSigned(names, { now: new Date('2026-03-01T00:00:00Z'), days: 10 });
    const cert = new X509Certificate(pair.certPem);
    expect(cert.subject).toBe('CN=sitegw-home');
    expect(cert.issuer).toBe(cert.subject);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.ca).toBe(false);
    expect(cert.subjectAltName).toBe(
      'DNS:sitegw-home, DNS:gateway.local, IP Address:192.168.1.20, IP Address:127.0.0.1, IP Address:FE80:0:0:0:0:0:1:2, IP Address:0:0:0:0:0:0:0:1',
    );
    expect(new Date(cert.validFrom).toISOString()).toBe('2026-02-28T00:00:00.000Z');
    expect(new Date(cert.validTo).toISOString()).toBe('2026-03-11T00:00:00.000Z');
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']); // Node's keyUsage is the extended key usage: serverAuth
  });

  it('encodes dates from 2050 on as GeneralizedTime and long name lists with long-form lengths', () => {
    const many = Array.from({ length: 40 }, (_, i) => `host-${i}.example.org`);
    const cert = new X509Certificate(
      createSelfSigned(many, { now: new Date('2049-06-01T00:00:00Z'), days: 3650 }).certPem,
    );
    expect(new Date(cert.validTo).getUTCFullYear()).toBe(2059);
    expect(cert.subjectAltName!.split(', ')).toHaveLength(40);
  });

  it('serves TLS that a client trusting the certificate accepts for the names in it', async () => {
    const pair = createSelfSigned(['sitegw-test', 'localhost', '127.0.0.1']);
    const server = createServer({ cert: pair.certPem, key: pair.keyPem }, (_req, res) => res.end('{"ok":true}'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as { port: number }).port;
      const r = await rawRequest({ url: `https://127.0.0.1:${port}/`, ca: pair.certPem });
      expect(r.body).toEqual({ ok: true });
      expect(r.fingerprint).toBe(new X509Certificate(pair.certPem).fingerprint256);
      // a name that is not in the certificate is refused
      const other = createSelfSigned(['elsewhere.example']);
      const s2 = createServer({ cert: other.certPem, key: other.keyPem }, (_req, res) => res.end('x'));
      await new Promise<void>((r) => s2.listen(0, '127.0.0.1', r));
      await expect(
        rawRequest({ url: `https://127.0.0.1:${(s2.address() as { port: number }).port}/`, ca: other.certPem }),
      ).rejects.toThrow(/IP: 127.0.0.1 is not in the cert's list/);
      s2.close();
    } finally {
      server.close();
    }
  });
});
