import { Retry } from '../core/backoff.js';
import { ModbusError } from './errors.js';

export interface ReconnectOptions {
  /** first delay after a failed connect; doubles up to maxBackoffMs */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  now?: () => number;
}

/** When a bus may try to open its link again after failing to. */
export class ReconnectBackoff {
  private readonly retry: Retry;

  constructor(opts: ReconnectOptions = {}) {
    this.retry = new Retry(opts.minBackoffMs ?? 250, opts.maxBackoffMs ?? 30_000, opts.now ?? Date.now);
  }

  /** the error for a request made while waiting, or null when a connect may be tried */
  check(name: string): ModbusError | null {
    const wait = this.retry.waitLeft();
    if (wait <= 0) return null;
    return new ModbusError('connection', `not connected to ${name}; next attempt in ${wait} ms`, undefined, true);
  }

  failed(): void {
    this.retry.failed();
  }

  succeeded(): void {
    this.retry.succeeded();
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
