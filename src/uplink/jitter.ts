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
