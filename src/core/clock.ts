/**
 * The daemon's clock. Everything that looks at time (the simulator's physics, poll schedules,
 * bucket closing) asks this, so `--speed N` makes the whole site run N times faster than real
 * time and tests can drive time by hand.
 *
 * Two readings (docs/design.md "Field faults: what the numbers survive"): `now()` follows the wall clock and only labels
 * data; `mono()` never steps, and every interval (what is due, how long since) is measured on it.
 * A Pi without a real-time clock boots in the past and NTP steps it later; an interval measured
 * on the wall clock would stop polling for as long as the clock went back.
 */
export interface Clock {
  /** ms since epoch on the wall clock (scaled), for labels: it may step back or forward */
  now(): number;
  /** ms on a clock that never steps (scaled like now()), for intervals; its origin means nothing */
  mono(): number;
  /** how many clock-ms pass per real ms */
  readonly speed: number;
  /** run fn after `ms` of clock time */
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(t: ClockTimer): void;
  sleep(ms: number): Promise<void>;
}

export interface ClockTimer {
  readonly id: unknown;
}

export class ScaledClock implements Clock {
  private readonly realOrigin: number;
  private readonly monoOrigin: number;
  private readonly origin: number;

  constructor(
    readonly speed = 1,
    origin = Date.now(),
  ) {
    if (!(speed > 0) || !Number.isFinite(speed)) throw new RangeError(`clock speed must be > 0, got ${speed}`);
    this.origin = origin;
    this.realOrigin = Date.now();
    this.monoOrigin = performance.now();
  }

  now(): number {
    return this.origin + (Date.now() - this.realOrigin) * this.speed;
  }

  mono(): number {
    // performance.now() is CLOCK_MONOTONIC, which neither NTP nor `date -s` steps
    return (performance.now() - this.monoOrigin) * this.speed;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    const id = setTimeout(fn, Math.max(0, ms / this.speed));
    return { id };
  }

  clearTimeout(t: ClockTimer): void {
    clearTimeout(t.id as NodeJS.Timeout);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, ms));
  }
}

/**
 * A clock that moves only when told to: for unit tests. Timers fire in order during advance();
 * step() moves the wall clock alone, as NTP or an operator does.
 */
export class ManualClock implements Clock {
  readonly speed = 1;
  private t: number;
  private wallOffset = 0;
  private seq = 0;
  private timers: { at: number; seq: number; fn: () => void }[] = [];

  constructor(start: number) {
    this.t = start;
  }

  now(): number {
    return this.t + this.wallOffset;
  }

  mono(): number {
    return this.t;
  }

  /** The wall clock jumps by `ms` (back when negative); intervals and timers are untouched. */
  step(ms: number): void {
    this.wallOffset += ms;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    const entry = { at: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(entry);
    return { id: entry };
  }

  clearTimeout(t: ClockTimer): void {
    this.timers = this.timers.filter((e) => e !== t.id);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, ms));
  }

  /** Move time forward, firing due timers in time order. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.timers.shift();
      this.t = next.at;
      next.fn();
    }
    this.t = end;
  }
}
