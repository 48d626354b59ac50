/**
 * Failed attempts (wrong client secret, bad code or refresh token, wrong owner password) counted
 * in a sliding window, per address and per identity (the owner account, a client id).
 *
 * An attempt is RESERVED before its secret is hashed, synchronously, so parallel requests see
 * each other: with `maxFailures` reservations and failures on a key, the next request is refused
 * at once, before any scrypt work. A reservation that succeeds (or turns out not to be a guess)
 * is released and never counts; one that fails stays as a failure.
 *
 * Who can lock out whom (the LAN is hostile; an attacker has one or a few addresses):
 * - `addr:<ip>` takes `maxFailures` failures of any identity. A host that guesses blocks only
 *   itself, and guessing many client ids or the owner's password from it stops after maxFailures.
 * - `id:<identity>` takes `maxFailures * IDENTITY_SPREAD` failures from all addresses together. It
 *   bounds guessing spread over many addresses (a LAN host can take many IPv6 addresses). One
 *   address can never fill it alone (its own key stops it first), so one host cannot lock the
 *   owner or a partner out; several colluding addresses can, and then only for addresses that
 *   have not proven this identity lately: an address where the identity succeeded within
 *   KNOWN_ADDRESS_MS is exempt from the identity key (it is still held to its own address key).
 *   The owner's own browser and a partner's server keep working during a distributed attack;
 *   what that attack can do is make a first login from a new address wait out the window.
 * - No key per (identity, address) pair: the address key already bounds what one address may
 *   fail, whatever identity it names, so a pair key would never be the one that refuses.
 * A refusal costs the gateway nothing but a map lookup; the attacker learns nothing from it.
 */
export interface LimiterOptions {
  maxFailures: number;
  windowMs: number;
  now: () => number;
  /** keys tracked at most; the least recently used are forgotten first (memory stays bounded under a spray of ids) */
  maxKeys?: number;
  /** where known addresses are kept across restarts (the store); memory only without it */
  known?: KnownAddressStore;
}

/** Keeps the addresses where identities signed in (src/store/known-addresses.ts behind it). */
export interface KnownAddressStore {
  /** the addresses known since `since` (ms epoch), oldest first */
  load(since: number): Iterable<{ identity: string; address: string; at: number }>;
  save(who: Subject, at: number, keep: number, since: number): void;
}

/** A known address's sign-in time is written again at most this often (a partner's token requests would write every time). */
const KNOWN_REWRITE_MS = 86_400_000;

/** Who is trying: the identity the attempt claims and the address it comes from. */
export interface Subject {
  identity: string;
  address: string;
}

/** Failures of one identity from all addresses, as a multiple of the per-address limit. */
export const IDENTITY_SPREAD = 3;
/** An address where an identity succeeded is exempt from that identity's key this long. */
export const KNOWN_ADDRESS_MS = 30 * 86_400_000;
/** addresses remembered per identity (a browser or two, a partner's servers) */
const KNOWN_PER_IDENTITY = 32;
/** While attempts are still being checked, a refused request may come back this soon. */
const IN_FLIGHT_RETRY_S = 1;

/** The request was refused without being checked. */
export class Refused {
  constructor(
    /** seconds, for Retry-After */
    readonly retryAfter: number,
    readonly reason: 'failures' | 'busy',
  ) {}
}

interface Counter {
  failures: number[];
  /** attempts reserved and still being checked */
  pending: number;
}

interface Limit {
  key: string;
  max: number;
}

/** One reserved attempt; settle it exactly once (later calls do nothing). */
export class Attempt {
  private open = true;

  constructor(
    private readonly limiter: FailureLimiter,
    readonly subject: Subject,
    private readonly keys: readonly string[],
  ) {}

  /** The credentials were right: nothing counts, and the address becomes known for the identity. */
  succeed(): void {
    if (this.settle()) this.limiter.settled(this.keys, false, this.subject);
  }

  /** A wrong guess: the reservation stays as a failure. */
  fail(): void {
    if (this.settle()) this.limiter.settled(this.keys, true);
  }

  /** Not a guess after all (a malformed request, or it was never checked): nothing counts. */
  release(): void {
    if (this.settle()) this.limiter.settled(this.keys, false);
  }

  private settle(): boolean {
    const was = this.open;
    this.open = false;
    return was;
  }
}

export class FailureLimiter {
  private readonly counters = new Map<string, Counter>();
  private readonly known = new Map<string, Map<string, number>>();
  private readonly maxKeys: number;

  constructor(private readonly opts: LimiterOptions) {
    this.maxKeys = opts.maxKeys ?? 10_000;
    for (const k of opts.known?.load(opts.now() - KNOWN_ADDRESS_MS) ?? [])
      this.remember({ identity: k.identity, address: k.address }, k.at);
  }

  /** Reserves an attempt on every key of `who`, or refuses it when one of them is full. */
  reserve(who: Subject): Attempt | Refused {
    const limits: Limit[] = [{ key: addressKey(who.address), max: this.opts.maxFailures }];
    if (!this.isKnown(who))
      limits.push({ key: identityKey(who.identity), max: this.opts.maxFailures * IDENTITY_SPREAD });
    const now = this.opts.now();
    let wait = 0;
    for (const { key, max } of limits) {
      const c = this.counter(key, now);
      if (c.failures.length >= max)
        wait = Math.max(wait, Math.ceil((c.failures[c.failures.length - max]! + this.opts.windowMs - now) / 1000));
      else if (c.failures.length + c.pending >= max) wait = Math.max(wait, IN_FLIGHT_RETRY_S);
      this.dropIfEmpty(key, c);
    }
    if (wait > 0) return new Refused(wait, 'failures');
    const keys = limits.map((l) => l.key);
    for (const key of keys) this.counter(key, now).pending++;
    this.bound();
    return new Attempt(this, who, keys);
  }

  /** @internal Attempt's settlement */
  settled(keys: readonly string[], failed: boolean, succeeded?: Subject): void {
    const now = this.opts.now();
    for (const key of keys) {
      const c = this.counter(key, now);
      c.pending = Math.max(0, c.pending - 1);
      if (failed) c.failures.push(now);
      // keep only what can still refuse: the newest failures up to the largest limit
      if (c.failures.length > this.opts.maxFailures * IDENTITY_SPREAD) c.failures.shift();
      this.dropIfEmpty(key, c);
    }
    if (succeeded) {
      const before = this.known.get(succeeded.identity)?.get(succeeded.address);
      this.remember(succeeded, now);
      if (before === undefined || now - before >= KNOWN_REWRITE_MS)
        this.opts.known?.save(succeeded, now, KNOWN_PER_IDENTITY, now - KNOWN_ADDRESS_MS);
    }
    this.bound();
  }

  private isKnown(who: Subject): boolean {
    const at = this.known.get(who.identity)?.get(who.address);
    return at !== undefined && at > this.opts.now() - KNOWN_ADDRESS_MS;
  }

  private remember(who: Subject, now: number): void {
    const addresses = this.known.get(who.identity) ?? new Map<string, number>();
    addresses.delete(who.address);
    addresses.set(who.address, now);
    while (addresses.size > KNOWN_PER_IDENTITY) addresses.delete(addresses.keys().next().value!);
    this.known.delete(who.identity);
    this.known.set(who.identity, addresses);
    while (this.known.size > this.maxKeys) this.known.delete(this.known.keys().next().value!);
  }

  /** The key's counter with failures outside the window dropped; moved to the most recently used end. */
  private counter(key: string, now: number): Counter {
    const c = this.counters.get(key) ?? { failures: [], pending: 0 };
    c.failures = c.failures.filter((t) => t > now - this.opts.windowMs);
    this.counters.delete(key);
    this.counters.set(key, c);
    return c;
  }

  private dropIfEmpty(key: string, c: Counter): void {
    if (c.failures.length === 0 && c.pending === 0) this.counters.delete(key);
  }

  private bound(): void {
    for (const [key, c] of this.counters) {
      if (this.counters.size <= this.maxKeys) break;
      // a key with attempts in flight is kept: its settlement must find it
      if (c.pending === 0) this.counters.delete(key);
    }
  }
}

const addressKey = (ip: string): string => `addr:${ip}`;
const identityKey = (identity: string): string => `id:${identity.slice(0, 200)}`;

export const OWNER_IDENTITY = 'owner';
export const clientIdentity = (id: string): string => `client:${id.slice(0, 200)}`;
