/**
 * A global bound on concurrent secret hashing. Each scrypt check of a client secret or the
 * owner's password costs about 0.1 s of a core and 32 MiB on a Raspberry Pi 4 (secrets.ts); an
 * unbounded flood of wrong secrets would queue hundreds of them in libuv's thread pool, ahead of
 * a legitimate request (and of the SQLite and file work that shares that pool).
 *
 * Work is admitted per address: at most `perAddress` checks of one address are running or
 * waiting, and at most `maxWaiting` wait in all; beyond that the request is refused at once (the
 * caller answers 429 with Retry-After). When a slot frees, the waiting address with the fewest
 * checks running goes next (ties: the one served least recently), so a flood from one address, or
 * from several, never queues ahead of another address's single request: that request waits for
 * about one check, not for the flood.
 */
export interface HashGateOptions {
  /** checks running at once */
  concurrency: number;
  /** checks of one address running or waiting */
  perAddress: number;
  /** checks waiting, all addresses together */
  maxWaiting: number;
}

/** Sized for a Pi 4: two of its four cores and 64 MiB for hashing at most, a queue of about 3 s worst case. */
export const PI_HASHING: HashGateOptions = { concurrency: 2, perAddress: 4, maxWaiting: 32 };

/** The gate is full for this address; nothing was hashed. */
export class GateBusy extends Error {
  /** seconds: a waiting slot frees within a few checks */
  readonly retryAfter = 1;
  constructor() {
    super('too many secret checks at once');
    this.name = 'GateBusy';
  }
}

interface AddressLoad {
  running: number;
  waiting: (() => void)[];
  /** `started` when a check of this address last started; 0 never */
  servedAt: number;
}

export class HashGate {
  private readonly load = new Map<string, AddressLoad>();
  private running = 0;
  private waitingTotal = 0;
  /** checks started since start (tests and the log use it to see the order of work) */
  started = 0;

  constructor(private readonly opts: HashGateOptions) {}

  get waiting(): number {
    return this.waitingTotal;
  }

  /** Runs `work` when a slot is free; throws GateBusy at once when the address or the queue is full. */
  async run<T>(address: string, work: () => Promise<T>): Promise<T> {
    const load = this.load.get(address) ?? { running: 0, waiting: [], servedAt: 0 };
    if (load.running + load.waiting.length >= this.opts.perAddress) throw new GateBusy();
    if (this.running >= this.opts.concurrency) {
      if (this.waitingTotal >= this.opts.maxWaiting) throw new GateBusy();
      this.load.set(address, load);
      this.waitingTotal++;
      await new Promise<void>((resolve) => load.waiting.push(resolve));
    } else {
      this.load.set(address, load);
      this.running++;
      load.running++;
      load.servedAt = ++this.started;
    }
    try {
      return await work();
    } finally {
      this.running--;
      load.running--;
      if (load.running === 0 && load.waiting.length === 0) this.load.delete(address);
      this.next();
    }
  }

  private next(): void {
    if (this.running >= this.opts.concurrency) return;
    let pick: AddressLoad | undefined;
    for (const load of this.load.values()) {
      if (load.waiting.length === 0) continue;
      if (
        pick === undefined ||
        load.running < pick.running ||
        (load.running === pick.running && load.servedAt < pick.servedAt)
      )
        pick = load;
    }
    if (!pick) return;
    this.running++;
    this.waitingTotal--;
    pick.running++;
    pick.servedAt = ++this.started;
    pick.waiting.shift()!();
  }
}
