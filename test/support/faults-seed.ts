/**
 * Seeds for the fault-invariant harnesses (docs/design.md "How fault-prone code is tested"): a
 * seeded PRNG, so a run's random faults replay exactly from its seed, and the seeds a run uses:
 * `SEED=n` replays one, `FAULT_SEEDS=k` runs k fresh ones (default given by the caller).
 */

/** mulberry32: small, fast, good enough to pick faults; the same seed gives the same sequence. */
export class Prng {
  private s: number;

  constructor(readonly seed: number) {
    this.s = seed >>> 0;
  }

  /** [0, 1) */
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** an integer in [lo, hi] */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** one of `items`, each with its weight */
  pick<T>(items: readonly (readonly [T, number])[]): T {
    const total = items.reduce((n, [, w]) => n + w, 0);
    let r = this.next() * total;
    for (const [item, w] of items) {
      r -= w;
      if (r < 0) return item;
    }
    return items.at(-1)![0];
  }
}

/** The seeds to run: SEED=n alone (a replay), else `count` (or FAULT_SEEDS) fresh ones. */
export function faultSeeds(count: number, env: NodeJS.ProcessEnv = process.env): number[] {
  if (env.SEED !== undefined) {
    const seed = Number(env.SEED);
    if (!Number.isInteger(seed) || seed < 0) throw new Error(`SEED must be a non-negative integer, got '${env.SEED}'`);
    return [seed];
  }
  const n = env.FAULT_SEEDS === undefined ? count : Number(env.FAULT_SEEDS);
  return Array.from({ length: n }, () => Math.floor(Math.random() * 2 ** 31));
}
