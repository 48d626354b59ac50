/**
 * "Did you mean …?" for misspelt keys, enum values, zone names and currency codes. Optimal string
 * alignment distance, so a swap of two neighbouring letters ('prot' for 'port') costs one edit,
 * which is the commonest typo when typing on a laptop in a plant room.
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, () => new Array<number>(cols).fill(0));
  for (let i = 0; i < rows; i++) d[i][0] = i;
  for (let j = 0; j < cols; j++) d[0][j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/**
 * The candidate closest to `input`, or undefined when none is close enough to be a plausible
 * typo (a suggestion that is far off misleads more than it helps). Case is ignored because
 * 'unitid' for 'unitId' is a typo, not a different word.
 */
export function closest(input: string, candidates: Iterable<string>): string | undefined {
  const needle = input.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const dist = editDistance(needle, c.toLowerCase());
    if (dist < bestDistance) {
      best = c;
      bestDistance = dist;
    }
  }
  if (best === undefined) return undefined;
  const allowed = Math.max(1, Math.min(3, Math.floor(Math.max(needle.length, best.length) / 3)));
  return bestDistance <= allowed ? best : undefined;
}
