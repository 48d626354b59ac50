/**
 * A slowly varying function sampled on an absolute time lattice and interpolated linearly in
 * between. The sun's path and the daily load shape change over minutes, yet the model asks every
 * simulated second; sampling once a minute makes multi-day pre-fill cheap, and because the lattice
 * is fixed in absolute time the value at an instant never depends on what was asked before.
 */
export class LatticeLerp {
  private k = Number.NaN;
  private a = 0;
  private b = 0;

  constructor(
    private readonly fn: (ts: number) => number,
    private readonly periodMs: number,
  ) {}

  at(ts: number): number {
    const x = ts / this.periodMs;
    const k = Math.floor(x);
    if (k !== this.k) {
      // the next cell usually starts where this one ended
      if (k === this.k + 1) this.a = this.b;
      else this.a = this.fn(k * this.periodMs);
      this.b = this.fn((k + 1) * this.periodMs);
      this.k = k;
    }
    return this.a + (this.b - this.a) * (x - k);
  }
}
