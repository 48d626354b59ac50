/**
 * The device's identity in IEEE 2030.5 terms, read off its certificate (IEEE 2030.5-2018 §6.3.4):
 * the LFDI (long-form device identifier) is the first 160 bits of the SHA-256 hash of the
 * certificate in DER form, written as 40 hex digits; the SFDI (short form) is the first 36 bits of
 * the LFDI as a decimal number followed by a check digit that makes the sum of all its digits a
 * multiple of 10. The distributor is given both at enrolment (docs/grid-operator.md); the server
 * finds the device's EndDevice by them.
 */
import { createHash, X509Certificate } from 'node:crypto';

export interface DeviceIdentity {
  /** 40 upper-case hex digits */
  lfdi: string;
  /** 12 decimal digits at most, the last the check digit */
  sfdi: string;
}

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

/** The certificate's fingerprint as 64 upper-case hex digits: SHA-256 of its DER bytes. */
export function certificateFingerprint(der: Buffer): string {
  return createHash('sha256').update(der).digest('hex').toUpperCase();
}

/** LFDI from a fingerprint (or any hex string of at least 40 digits): its first 160 bits. */
export function lfdiOf(fingerprintHex: string): string {
  if (!/^[0-9a-fA-F]{40,}$/.test(fingerprintHex)) throw new Error('an LFDI is taken from at least 40 hex digits');
  return fingerprintHex.slice(0, 40).toUpperCase();
}

/** The digit that makes the sum of `digits`' digits and itself a multiple of 10. */
export function sfdiCheckDigit(digits: string): number {
  let sum = 0;
  for (const c of digits) sum += c.charCodeAt(0) - 48;
  return (10 - (sum % 10)) % 10;
}

/** SFDI from an LFDI: the first 36 bits (9 hex digits) in decimal, then the check digit. */
export function sfdiOf(lfdi: string): string {
  const decimal = BigInt(`0x${lfdiOf(lfdi).slice(0, 9)}`).toString(10);
  return `${decimal}${sfdiCheckDigit(decimal)}`;
}

/** Whether an SFDI's check digit is right (the sum of its digits is a multiple of 10). */
export function sfdiValid(sfdi: string): boolean {
  return /^\d{1,12}$/.test(sfdi) && sfdiCheckDigit(sfdi) === 0;
}

/**
 * LFDI and SFDI of the first certificate of a PEM file (the device's own; a chain follows it).
 * Throws when the text holds no certificate Node can read.
 */
export function identityOfPem(pem: string | Buffer): DeviceIdentity {
  const block = (typeof pem === 'string' ? pem : pem.toString('latin1')).match(CERT_BLOCK)?.[0];
  if (!block) throw new Error('no PEM certificate (-----BEGIN CERTIFICATE-----) in the text');
  const lfdi = lfdiOf(certificateFingerprint(new X509Certificate(block).raw));
  return { lfdi, sfdi: sfdiOf(lfdi) };
}
