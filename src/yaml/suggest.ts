/**
 * "Did you mean …?" for misspelt keys, enum values, zone names and currency codes. Optimal string
 * alignment distance, so a swap of two neighbouring letters ('prot' for 'port') costs one edit,
 * which is the commonest typo when typing on a laptop in a plant room.
 */
export function editDistance(a: string, b: string): number {
  const cols = b.length + 1;
  // one flat table, row i at i * cols: d(i, j) is the distance between a's first i and b's first j
  const d = new Int32Array((a.length + 1) * cols);
  const at = (i: number, j: number) => d[i * cols + j] ?? 0;
  for (let i = 0; i <= a.length; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, at(i - 2, j - 2) + 1);
      d[i * cols + j] = v;
    }
  }
  return at(a.length, b.length);
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
