import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { identityOfPem, lfdiOf, sfdiOf, sfdiValid } from '../../src/gridop/identity.js';

const fixture = (f: string) => readFileSync(new URL(`../fixtures/gridop/${f}`, import.meta.url), 'utf8');

describe('LFDI and SFDI (IEEE 2030.5-2018 §6.3.4)', () => {
  it("gives the standard's worked example: LFDI the first 160 bits, SFDI 36 bits and a check digit", () => {
    const fingerprint = '3E4F45AB31EDFE5B67E343E5E4562E31984E23E5349E2AD745672ED145EE213A';
    expect(lfdiOf(fingerprint)).toBe('3E4F45AB31EDFE5B67E343E5E4562E31984E23E5');
    expect(sfdiOf(lfdiOf(fingerprint))).toBe('167261211391');
  });

  it('checks the check digit: the sum of all digits is a multiple of 10', () => {
    expect(sfdiValid('167261211391')).toBe(true);
    expect(sfdiValid('167261211390')).toBe(false);
    expect(sfdiValid('16726121139x')).toBe(false);
    expect(sfdiOf('0000000000000000000000000000000000000000')).toBe('00');
  });

  it("hashes the certificate's DER bytes (open-dynamic-export's published fingerprint)", () => {
    expect(identityOfPem(fixture('ode-selfsigned.pem')).lfdi).toBe('B9A8A75E324D2312AD09F8DAF9C1295A3CE4142E');
  });

  it('takes the first certificate of a chain, one with an empty subject and no expiry, as 2030.5 issues them', () => {
    const pem = fixture('ode-device-chain.pem');
    const id = identityOfPem(pem);
    expect(id.lfdi).toBe('0F8872FF54ACDC4A9B789F0872255051D0BDBB64');
    expect(id.sfdi).toBe(sfdiOf('0F8872FF5'.padEnd(40, '0')));
    expect(sfdiValid(id.sfdi)).toBe(true);
    const cert = new X509Certificate(pem);
    // Node reads an empty subject as undefined (20) or ''
    expect(cert.subject ?? '').toBe('');
    expect(cert.validTo).toMatch(/9999/);
  });

  it('names a text without a certificate', () => {
    expect(() => identityOfPem('not a certificate')).toThrow(/no PEM certificate/);
    expect(() => lfdiOf('abc')).toThrow(/40 hex digits/);
  });
});
