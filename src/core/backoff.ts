/**
 * The wait before the next try after `failures` failures in a row (0: after the first): `first`,
 * doubled at each further failure, never more than `most`. One rule for every retry of the
 * gateway (a Modbus link, a unit that stops answering, the broker, an inverter's limit not yet
 * found): none of them hammers a device or a server that is down, and each is back within `most`
 * of its return.
 */
export function doubling(first: number, most: number, failures: number): number {
  return Math.min(most, first * 2 ** Math.max(0, failures));
}

/**
 * The retry state of one thing that fails and is tried again: the failures in a row and when the
 * next try may be, by `doubling`. Kept in one place so a link, a device's look and a limit's look
 * cannot each count or reset it their own way.
 */
export class Retry {
  private failures = 0;
  private nextAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly first: number,
    private readonly most: number,
    private readonly now: () => number,
  ) {}

  /** failures in a row since the last success */
  get inARow(): number {
    return this.failures;
  }

  /** ms until the next try may be made; none (≤ 0) once the wait is over */
  waitLeft(): number {
    return this.nextAt - this.now();
  }

  /**
   * A try begins: no other is due until the wait the failures so far give, so a try on its way
   * (a look in the background) is not made twice meanwhile.
   */
  trying(): void {
    this.nextAt = this.now() + doubling(this.first, this.most, this.failures);
  }

  /** The try failed: the next after a doubled wait from now, which is returned. */
  failed(): number {
    const wait = doubling(this.first, this.most, this.failures++);
    this.nextAt = this.now() + wait;
    return wait;
  }

  succeeded(): void {
    this.failures = 0;
    this.nextAt = Number.NEGATIVE_INFINITY;
  }

  /** The next try may be made now, whatever the wait (a stop looks once more); the count stays. */
  dueNow(): void {
    this.nextAt = Number.NEGATIVE_INFINITY;
  }
}
