/**
 * Output precision. Rounding is a monotonic function, so counters that never decrease still
 * never decrease after it.
 */
export function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
