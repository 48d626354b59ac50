import type { RegisterReader } from '../core/register-reader.js';
import type { RegisterWriter } from '../core/storage-control.js';
import { ModbusError, toModbusError } from './errors.js';
import type { ReadRequest, RegisterFunction } from './rtu-frame.js';
import { checkWrite, type WriteRequest } from './rtu-write-frame.js';
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
/** One request a bus carries: a read (FC3, FC4) or a write (FC16). */
export type BusRequest = ReadRequest | WriteRequest;

export abstract class QueuedBus implements RegisterReader, RegisterWriter {
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

  /**
   * FC16 on the same queue as the polls, so a write never interleaves with a read on the wire.
   * Writes are not counted against the unit's backoff: a write that fails is control's to handle.
   */
  writeHolding(unitId: number, address: number, values: number[], timeoutMs = this.opts.timeoutMs): Promise<void> {
    checkWrite({ unitId, address, values });
    return this.enqueue(async () => {
      if (this.closed) throw new ModbusError('connection', `${this.name} is closed`);
      this.sent++;
      await this.transact({ unitId, fn: 'write', address, values: [...values] }, timeoutMs);
    });
  }

  /** A view of the bus for one device: its own timeout, the bus's queue. */
  reader(timeoutMs: number): RegisterReader & RegisterWriter {
    return {
      readHolding: (u, a, n) => this.read('holding', u, a, n, timeoutMs),
      readInput: (u, a, n) => this.read('input', u, a, n, timeoutMs),
      writeHolding: (u, a, v) => this.writeHolding(u, a, v, timeoutMs),
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
  protected abstract transact(req: BusRequest, timeoutMs: number): Promise<number[]>;

  /** Release the link; called once the queue is empty. */
  protected abstract shutdown(): Promise<void>;

  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const run = this.tail.then(job, job);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
