import type { RegisterReader } from '../core/register-reader.js';
import { ModbusError, toModbusError } from './errors.js';
import type { ReadRequest, RegisterFunction } from './rtu-frame.js';
import { UnitBackoff, type UnitBackoffOptions } from './unit-backoff.js';

export interface QueuedBusOptions {
  /** per-request timeout when the caller gives none, real ms */
  timeoutMs: number;
  backoff?: UnitBackoffOptions;
}

/**
 * What every bus shares: one request on the wire at a time (a queue in arrival order), every
 * request with a timeout, and per-unit backoff so a silent unit costs its neighbours little.
 * Subclasses only know how to carry one request over their link.
 */
export abstract class QueuedBus implements RegisterReader {
  readonly backoff: UnitBackoff;
  /** requests that went on the wire (skipped ones not counted) */
  sent = 0;
  protected closed = false;
  private tail: Promise<unknown> = Promise.resolve();

  protected constructor(
    readonly name: string,
    protected readonly opts: QueuedBusOptions,
  ) {
    this.backoff = new UnitBackoff(opts.backoff);
  }

  readHolding(unitId: number, address: number, length: number): Promise<number[]> {
    return this.read('holding', unitId, address, length);
  }

  readInput(unitId: number, address: number, length: number): Promise<number[]> {
    return this.read('input', unitId, address, length);
  }

  /** A view of the bus for one device: its own timeout, the bus's queue. */
  reader(timeoutMs: number): RegisterReader {
    return {
      readHolding: (u, a, n) => this.read('holding', u, a, n, timeoutMs),
      readInput: (u, a, n) => this.read('input', u, a, n, timeoutMs),
    };
  }

  read(
    fn: RegisterFunction,
    unitId: number,
    address: number,
    quantity: number,
    timeoutMs = this.opts.timeoutMs,
  ): Promise<number[]> {
    return this.enqueue(async () => {
      if (this.closed) throw new ModbusError('connection', `${this.name} is closed`);
      // checked when the request reaches the wire, not when it was queued: the state may have changed meanwhile
      const skip = this.backoff.check(unitId, this.name);
      if (skip) throw skip;
      try {
        this.sent++;
        const registers = await this.transact({ unitId, fn, address, quantity }, timeoutMs);
        this.backoff.answered(unitId);
        return registers;
      } catch (err) {
        const e = toModbusError(err);
        if (e.kind === 'timeout' && !e.skipped) this.backoff.timedOut(unitId);
        else if (e.kind === 'exception' || e.kind === 'decode') this.backoff.answered(unitId);
        if (e.skipped) this.sent--;
        throw e;
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.tail.catch(() => undefined);
    await this.shutdown();
  }

  /** Carry one request over the link and return its registers, or throw a ModbusError. */
  protected abstract transact(req: ReadRequest, timeoutMs: number): Promise<number[]>;

  /** Release the link; called once the queue is empty. */
  protected abstract shutdown(): Promise<void>;

  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const run = this.tail.then(job, job);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
