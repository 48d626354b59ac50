/**
 * Seeded, stateless randomness: every value is a pure function of (seed, stream, index), so the
 * simulated site looks the same whenever the same instant is computed, whichever path led there
 * (live polling, history pre-fill, a test jumping straight to noon).
 */

/** 32-bit integer hash (murmur3 finaliser over a few mixed words) → [0, 1). */
export function hash01(seed: number, stream: number, index: number): number {
  let h = Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(stream | 0, 0x85ebca77) ^ Math.imul(index | 0, 0xc2b2ae3d);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

/**
 * 1-D value noise in [0, 1]: random values on an integer lattice, joined with smoothstep so the
 * curve and its slope are continuous (clouds drift, they do not jump from one second to the next).
 */
export function valueNoise(seed: number, stream: number, x: number): number {
  const k = Math.floor(x);
  const f = x - k;
  const a = hash01(seed, stream, k);
  const b = hash01(seed, stream, k + 1);
  const s = f * f * (3 - 2 * f);
  return a + (b - a) * s;
}

/**
 * valueNoise over time with a fixed period, remembering the current lattice cell: the model asks
 * once per simulated second and the cell changes every few minutes, so the hashes are mostly saved.
 */
export class TimeNoise {
  private k = Number.NaN;
  private a = 0;
  private b = 0;

  constructor(
    private readonly seed: number,
    private readonly stream: number,
    private readonly periodMs: number,
  ) {}

  at(ts: number): number {
    const x = ts / this.periodMs;
    const k = Math.floor(x);
    if (k !== this.k) {
      this.k = k;
      this.a = hash01(this.seed, this.stream, k);
      this.b = hash01(this.seed, this.stream, k + 1);
    }
    const f = x - k;
    return this.a + (this.b - this.a) * f * f * (3 - 2 * f);
  }
}
