/**
 * Who gets a bus next: the gateway's own requests (polls, control) in arrival order, always
 * first; then guests (the Modbus proxy's clients, docs/modbus-proxy.md) one request each in turn,
 * each from a queue of its own with a bound. A guest can delay the gateway's next request by the
 * one transaction it has on the wire, never more: after an own request, the lanes wait until the
 * event loop has run the caller's continuation (setImmediate), so the next read of a poll goes
 * out before any guest's.
 */
import { ModbusError } from './errors.js';

interface Job {
  run(): Promise<void>;
  drop(e: Error): void;
}

/** A guest's queue is full: it sends faster than it reads its answers, or floods. */
export class GuestQueueFull extends Error {
  constructor(limit: number) {
    super(`more than ${limit} requests waiting`);
    this.name = 'GuestQueueFull';
  }
}

/** One guest's place at the bus. */
export class GuestLane {
  readonly jobs: Job[] = [];
  closed = false;

  constructor(
    readonly limit: number,
    private readonly lanes: BusLanes,
  ) {}

  /** Fails what it still has queued; the request on the wire (if any) runs to its end. */
  close(): void {
    this.closed = true;
    for (const j of this.jobs.splice(0)) j.drop(new ModbusError('connection', 'the guest left'));
    this.lanes.forget(this);
  }
}

export class BusLanes {
  private readonly own: Job[] = [];
  /** guests with work, in turn order: the one served goes to the back */
  private readonly waiting = new Set<GuestLane>();
  private active = false;
  private idleWaiters: (() => void)[] = [];

  lane(limit: number): GuestLane {
    return new GuestLane(limit, this);
  }

  /** `job` once every own request before it has run; it runs alone on the bus. */
  ownTurn<T>(job: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.own.push({ run: () => job().then(resolve, reject), drop: reject });
      this.pump();
    });
  }

  /** `job` in the guest's turn; throws GuestQueueFull at once when its queue is full. */
  guestTurn<T>(lane: GuestLane, job: () => Promise<T>): Promise<T> {
    if (lane.closed) return Promise.reject(new ModbusError('connection', 'the guest left'));
    if (lane.jobs.length >= lane.limit) return Promise.reject(new GuestQueueFull(lane.limit));
    return new Promise<T>((resolve, reject) => {
      lane.jobs.push({ run: () => job().then(resolve, reject), drop: reject });
      this.waiting.add(lane);
      this.pump();
    });
  }

  forget(lane: GuestLane): void {
    this.waiting.delete(lane);
  }

  /** Resolves once nothing runs and nothing waits. */
  idle(): Promise<void> {
    if (!this.active && this.own.length === 0 && this.waiting.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    if (this.active) return;
    const own = this.own.shift();
    if (own) {
      this.run(own, true);
      return;
    }
    const lane = this.waiting.values().next().value as GuestLane | undefined;
    if (lane) {
      const job = lane.jobs.shift()!;
      this.waiting.delete(lane);
      if (lane.jobs.length > 0) this.waiting.add(lane);
      this.run(job, false);
      return;
    }
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private run(job: Job, own: boolean): void {
    this.active = true;
    // started on a later tick, as a promise chain would: a caller that queues and then closes sees the close
    void Promise.resolve()
      .then(() => job.run())
      .finally(() => {
        if (own && this.own.length === 0 && this.waiting.size > 0) {
          // the poll's next read is queued by its continuation, a few microtasks away: let it in first
          setImmediate(() => {
            this.active = false;
            this.pump();
          });
          return;
        }
        this.active = false;
        this.pump();
      });
  }
}
