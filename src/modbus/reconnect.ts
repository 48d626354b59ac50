import { doubling } from '../core/backoff.js';
import { ModbusError } from './errors.js';

export interface ReconnectOptions {
  /** first delay after a failed connect; doubles up to maxBackoffMs */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  now?: () => number;
}

/** When a bus may try to open its link again after failing to. */
export class ReconnectBackoff {
  private failures = 0;
  private nextAt = 0;
  private readonly now: () => number;

  constructor(private readonly opts: ReconnectOptions = {}) {
    this.now = opts.now ?? Date.now;
  }

  /** the error for a request made while waiting, or null when a connect may be tried */
  check(name: string): ModbusError | null {
    const wait = this.nextAt - this.now();
    if (wait <= 0) return null;
    return new ModbusError('connection', `not connected to ${name}; next attempt in ${wait} ms`, undefined, true);
  }

  failed(): void {
    this.nextAt = this.now() + doubling(this.opts.minBackoffMs ?? 250, this.opts.maxBackoffMs ?? 30_000, this.failures);
    this.failures++;
  }

  succeeded(): void {
    this.failures = 0;
    this.nextAt = 0;
  }
}

/** Rejects with a timeout error when p has not settled within ms. */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new ModbusError('timeout', `${what} took longer than ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}
