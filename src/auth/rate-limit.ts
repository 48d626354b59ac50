/**
 * Counts failed attempts (wrong client secret, bad code or refresh token, wrong owner password)
 * per key — a client id, an address, the owner account — in a sliding window. A key with
 * `maxFailures` failures inside the window is refused until the oldest of them leaves it. The
 * refusal happens before any secret is hashed, so a flood of guesses costs the Pi no scrypt work.
 */
export interface LimiterOptions {
  maxFailures: number;
  windowMs: number;
  now: () => number;
  /** keys tracked at most; the least recently failed are forgotten first (memory stays bounded under a spray of ids) */
  maxKeys?: number;
}

export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();
  private readonly maxKeys: number;

  constructor(private readonly opts: LimiterOptions) {
    this.maxKeys = opts.maxKeys ?? 10_000;
  }

  /** Seconds until every key may try again, or 0 when none is blocked. */
  retryAfter(keys: readonly string[]): number {
    const now = this.opts.now();
    let wait = 0;
    for (const key of keys) {
      const times = this.recent(key, now);
      if (times.length >= this.opts.maxFailures) {
        const free = times[times.length - this.opts.maxFailures]! + this.opts.windowMs;
        wait = Math.max(wait, Math.ceil((free - now) / 1000));
      }
    }
    return wait;
  }

  fail(keys: readonly string[]): void {
    const now = this.opts.now();
    for (const key of keys) {
      const times = this.recent(key, now);
      times.push(now);
      // re-insert so Map order is least recently failed first
      this.failures.delete(key);
      this.failures.set(key, times.slice(-this.opts.maxFailures));
    }
    while (this.failures.size > this.maxKeys) this.failures.delete(this.failures.keys().next().value!);
  }

  private recent(key: string, now: number): number[] {
    const times = this.failures.get(key);
    if (!times) return [];
    const kept = times.filter((t) => t > now - this.opts.windowMs);
    if (kept.length === 0) this.failures.delete(key);
    else if (kept.length !== times.length) this.failures.set(key, kept);
    return kept;
  }
}

export const clientKey = (id: string): string => `client:${id.slice(0, 200)}`;
export const addressKey = (ip: string): string => `addr:${ip}`;
export const OWNER_KEY = 'owner';
