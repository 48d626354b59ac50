/**
 * The client offers its suites at OpenSSL's security level 0 (the only level at which OpenSSL 3.2+
 * allows the CCM-8 suite IEEE 2030.5 requires), so it checks the server's key strength itself.
 */
import type { PeerCertificate } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { CLIENT_CIPHERS, checkServer } from '../../src/gridop/http.js';

const cert = (c: Partial<PeerCertificate>) =>
  ({ subject: {}, subjectaltname: 'DNS:sep.example', ...c }) as unknown as PeerCertificate;

describe("the 2030.5 client's server check", () => {
  it('offers CCM-8 first, at the level OpenSSL 3.2+ allows it', () => {
    expect(CLIENT_CIPHERS.startsWith('ECDHE-ECDSA-AES128-CCM8:')).toBe(true);
    expect(CLIENT_CIPHERS.endsWith(':@SECLEVEL=0')).toBe(true);
  });

  it('takes a P-256 key and RSA of 2048 bits', () => {
    expect(checkServer('sep.example', cert({ bits: 256, asn1Curve: 'prime256v1' }))).toBeUndefined();
    expect(checkServer('sep.example', cert({ bits: 2048 }))).toBeUndefined();
  });

  it('refuses a weak key, and still a wrong host', () => {
    expect(checkServer('sep.example', cert({ bits: 160, asn1Curve: 'secp160r1' }))?.message).toMatch(
      /EC key has 160 bits/,
    );
    expect(checkServer('sep.example', cert({ bits: 1024 }))?.message).toMatch(/RSA key has 1024 bits, fewer than 2048/);
    expect(checkServer('other.example', cert({ bits: 256, asn1Curve: 'prime256v1' }))).toBeInstanceOf(Error);
  });
});
