/**
 * Secrets at rest. Client secrets and the owner's password are kept only as scrypt hashes
 * (RFC 7914, Node's crypto.scrypt) with their parameters in the stored string, so they can be
 * raised later without invalidating old hashes. Codes and tokens are 256-bit random values; a
 * plain SHA-256 is enough to store them, as nobody can guess a preimage of that much entropy.
 */
import { createHash, randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * How hard a stored secret is to guess from its hash. `stored`, everything a site keeps: N = 2^15
 * costs about 0.1 s on a Raspberry Pi 4 (0.13 s of CPU on an x64 core) and 32 MiB of memory per
 * check. `demo`, the demo's own client and owner only: their plaintext is written beside them
 * (demo-credentials.json) and printed in the banner, so a slow hash protects nothing, and its three
 * (two at start, one for the partner's first token) were a sixth of the demo's CPU before it
 * answered with history (bench/README.md "The demo's first minute").
 */
export type SecretStrength = 'stored' | 'demo';
const PARAMS: Record<SecretStrength, { N: number; r: number; p: number }> = {
  stored: { N: 1 << 15, r: 8, p: 1 },
  demo: { N: 1 << 12, r: 8, p: 1 },
};
const KEY_LEN = 32;
const SALT_LEN = 16;

function scryptAsync(secret: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const opts: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r * params.p };
  return new Promise((resolve, reject) =>
    scrypt(secret.normalize('NFKC'), salt, KEY_LEN, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64url. */
export async function hashSecret(secret: string, strength: SecretStrength = 'stored'): Promise<string> {
  const salt = randomBytes(SALT_LEN);
  const params = PARAMS[strength];
  const key = await scryptAsync(secret, salt, params);
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

function parseHash(
  stored: string,
): { params: { N: number; r: number; p: number }; salt: Buffer; key: Buffer } | undefined {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return undefined;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0)) return undefined;
  return { params: { N, r, p }, salt: Buffer.from(parts[4]!, 'base64url'), key: Buffer.from(parts[5]!, 'base64url') };
}

/** Stands in for an unknown client or a missing owner so that a miss takes as long as a wrong secret. */
let dummyHash: Promise<string> | undefined;

/**
 * Whether `candidate` matches `stored`, compared in constant time. With `stored` undefined the
 * same work is done against a dummy hash and the answer is false, so response times do not tell
 * which client ids exist.
 */
export async function verifySecret(candidate: string, stored: string | null | undefined): Promise<boolean> {
  const hash = stored ?? (await (dummyHash ??= hashSecret(randomBytes(16).toString('hex'))));
  const parsed = parseHash(hash);
  if (!parsed) return false;
  const key = await scryptAsync(candidate, parsed.salt, parsed.params);
  return key.length === parsed.key.length && timingSafeEqual(key, parsed.key) && stored != null;
}

/** A new 256-bit random value in base64url, with a short prefix that says what it is (and lets secret scanners find it). */
export function randomSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time equality of two strings of possibly different length. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
