import { performance } from 'node:perf_hooks';
import type { RegisterReader } from '../core/register-reader.js';
import type { RegisterWriter } from '../core/storage-control.js';
import { BusLanes, type GuestLane } from './bus-lanes.js';
import { ModbusError, toModbusError } from './errors.js';
import { RecentReads } from './recent-reads.js';
import type { ReadRequest, RegisterFunction } from './rtu-frame.js';
import { checkWrite, type WriteRequest } from './rtu-write-frame.js';
import { UnitBackoff, type UnitBackoffOptions } from './unit-backoff.js';

export interface QueuedBusOptions {
  /** per-request timeout when the caller gives none, real ms */
  timeoutMs: number;
  backoff?: UnitBackoffOptions;
}

/** One request a bus carries: a read (FC3, FC4) or a write (FC16). */
export type BusRequest = ReadRequest | WriteRequest;

/** Whose request is on the wire: the gateway's own, or a guest's (the Modbus proxy's clients). */
export type Origin = 'own' | 'guest';

/** A guest's read: the registers, and whether they came from the gateway's own read of them. */
export interface GuestRead {
  registers: number[];
  cached: boolean;
}

/**
 * What every bus shares: one request on the wire at a time (the gateway's own in arrival order,
 * guests behind them: bus-lanes.ts), every request with a timeout, and per-unit backoff so a
 * silent unit costs its neighbours little. Subclasses only know how to carry one request over
 * their link.
 */
export abstract class QueuedBus implements RegisterReader, RegisterWriter {
  readonly backoff: UnitBackoff;
  /** requests that went on the wire (skipped ones not counted) */
  sent = 0;
  /** of `sent`, the guests' requests */
  guestSent = 0;
  protected closed = false;
  private readonly lanes = new BusLanes();
  /** the gateway's own reads, for guests' reads of the same registers */
  private readonly recent = new RecentReads();

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
    return this.lanes.ownTurn(async () => {
      if (this.closed) throw new ModbusError('connection', `${this.name} is closed`);
      this.sent++;
      this.recent.forget(unitId, address, values.length);
      await this.transact({ unitId, fn: 'write', address, values: [...values] }, timeoutMs, 'own');
    });
  }

  /** A guest's place in the bus's queue: at most `limit` requests waiting (bus-lanes.ts). */
  guest(limit: number): GuestLane {
    return this.lanes.lane(limit);
  }

  /**
   * A guest's read, in its turn behind the gateway's own requests; answered from the gateway's
   * own read of the same registers when that is at most `maxAgeMs` old. A guest never moves the
   * unit's backoff, and is refused while the unit has failed to answer the gateway.
   */
  guestRead(
    lane: GuestLane,
    fn: RegisterFunction,
    unitId: number,
    address: number,
    quantity: number,
    timeoutMs: number,
    maxAgeMs: number,
  ): Promise<GuestRead> {
    const cached = this.recent.find(unitId, fn, address, quantity, maxAgeMs, performance.now());
    if (cached) return Promise.resolve({ registers: cached, cached: true });
    return this.lanes.guestTurn(lane, async () => {
      this.guestCheck(unitId);
      // the gateway may have read them while this request waited
      const meanwhile = this.recent.find(unitId, fn, address, quantity, maxAgeMs, performance.now());
      if (meanwhile) return { registers: meanwhile, cached: true };
      this.sent++;
      this.guestSent++;
      const registers = await this.transact({ unitId, fn, address, quantity }, timeoutMs, 'guest');
      return { registers, cached: false };
    });
  }

  /** A guest's FC16 write, in its turn behind the gateway's own requests. */
  guestWrite(lane: GuestLane, unitId: number, address: number, values: number[], timeoutMs: number): Promise<void> {
    checkWrite({ unitId, address, values });
    return this.lanes.guestTurn(lane, async () => {
      this.guestCheck(unitId);
      this.sent++;
      this.guestSent++;
      this.recent.forget(unitId, address, values.length);
      await this.transact({ unitId, fn: 'write', address, values: [...values] }, timeoutMs, 'guest');
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
    return this.lanes.ownTurn(async () => {
      if (this.closed) throw new ModbusError('connection', `${this.name} is closed`);
      // checked when the request reaches the wire, not when it was queued: the state may have changed meanwhile
      const skip = this.backoff.check(unitId, this.name);
      if (skip) throw skip;
      try {
        this.sent++;
        const registers = await this.transact({ unitId, fn, address, quantity }, timeoutMs, 'own');
        this.backoff.answered(unitId);
        this.recent.put(unitId, fn, address, registers, performance.now());
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
    await this.lanes.idle();
    await this.shutdown();
  }

  /**
   * Carry one request over the link and return its registers, or throw a ModbusError. A guest's
   * timeout is no evidence against the link: a client may ask for registers the device ignores.
   */
  protected abstract transact(req: BusRequest, timeoutMs: number, origin: Origin): Promise<number[]>;

  /** Release the link; called once the queue is empty. */
  protected abstract shutdown(): Promise<void>;

  private guestCheck(unitId: number): void {
    if (this.closed) throw new ModbusError('connection', `${this.name} is closed`);
    // the gateway's own next poll finds out whether the unit is back; a guest must not stretch its silence
    if (this.backoff.timeoutsOf(unitId) > 0)
      throw new ModbusError('timeout', `unit ${unitId} on ${this.name} is not answering`, undefined, true);
  }
}
