/** Median of samples (the mean of the middle two for an even count): robust to GC pauses. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** Least-squares slope of samples taken every `stepSeconds`, per hour: a growth trend under the GC's sawtooth. */
export function slopePerHour(ys: readonly number[], stepSeconds: number): number {
  const n = ys.length;
  if (n < 2) return 0;
  const mx = (n - 1) / 2;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  ys.forEach((y, i) => {
    num += (i - mx) * (y - my);
    den += (i - mx) ** 2;
  });
  return (num / den / stepSeconds) * 3600;
}
