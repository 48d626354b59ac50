import { createHash } from 'node:crypto';

/**
 * This site's publish delay after a bucket close: a fixed share of `seconds` taken from a hash of
 * its id. Fixed, so each site's messages keep an even 15-minute rhythm; from the id, so a
 * fleet's sites spread evenly over the window without any coordination (docs/fleet-scale.md).
 */
export function publishDelayMs(siteId: string, seconds: number): number {
  if (seconds <= 0) return 0;
  const h = createHash('sha256').update(siteId).digest().readUInt32BE(0);
  return Math.floor((h / 2 ** 32) * seconds * 1000);
}

/**
 * The wait before a reconnect attempt: a random point in the upper half of the backoff step
 * ("equal jitter"). After a broker restart a fleet's gateways would otherwise all come back in
 * the same second, every TLS handshake at once; the lower half stays empty so the doubling still
 * bounds how often one gateway tries.
 */
export function reconnectDelayMs(backoffMs: number, random: () => number = Math.random): number {
  return Math.round(backoffMs / 2 + random() * (backoffMs / 2));
}
