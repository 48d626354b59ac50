/**
 * Output precision. Rounding is a monotonic function, so counters that never decrease still
 * never decrease after it.
 */
export function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** soc percent (2 decimals) as a fraction, without binary noise such as 0.5523000000000001 */
export function percentToFraction(p: number): number {
  return Math.round(p * 100) / 10_000;
}
