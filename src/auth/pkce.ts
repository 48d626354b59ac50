/**
 * Proof Key for Code Exchange (RFC 7636), S256 only: `plain` would hand the verifier to anyone
 * who sees the authorization request, and RFC 9700 §2.1.1 asks for S256.
 */
import { createHash } from 'node:crypto';
import { safeEqual } from './secrets.js';

/** code_verifier: 43..128 unreserved characters (RFC 7636 §4.1). */
export const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** BASE64URL(SHA256(verifier)) is always 43 characters without padding (§4.2). */
export const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

export function verifierMatches(verifier: string, challenge: string): boolean {
  return VERIFIER.test(verifier) && safeEqual(s256(verifier), challenge);
}
