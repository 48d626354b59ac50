/**
 * Faults the simulator can inject, per host and unit, for the fault tests: a unit that stops
 * answering, answers with an exception, answers late; on TCP a server that resets its
 * connections mid-request; on RTU noise, a bad CRC or a cut-off frame instead of the answer.
 * It also counts the requests each unit received, so tests can tell what reached the wire.
 */
import type { SimHost } from './device-images.js';

export type SimFault =
  | { kind: 'silent' }
  | { kind: 'exception'; code: number }
  | { kind: 'delay'; ms: number }
  /** TCP: the server drops every connection instead of answering (a reset mid-poll) */
  | { kind: 'reset' }
  /** RTU: bytes that are no frame at all instead of the answer */
  | { kind: 'garbage' }
  /** RTU: the answer with its CRC spoiled */
  | { kind: 'bad-crc' }
  /** RTU: the first half of the answer only */
  | { kind: 'truncated' }
  /** RTU: a few noise bytes, then the correct answer */
  | { kind: 'noisy' }
  /** RTU: a well-formed frame (good CRC) holding one register less than asked */
  | { kind: 'short-count' }
  /** answer with these register values at these addresses (e.g. a not-implemented sentinel), the rest as usual */
  | { kind: 'override'; address: number; values: number[] };

export type FrameFault = Extract<
  SimFault,
  { kind: 'garbage' | 'bad-crc' | 'truncated' | 'noisy' | 'short-count' }
>['kind'];

interface Armed {
  /** one entry per coming request (null: answer normally); the last one repeats `remaining` times */
  plan: (SimFault | null)[];
  remaining: number;
}

const key = (host: SimHost, unitId: number) => `${host}/${unitId}`;

export class SimFaults {
  private readonly armed = new Map<string, Armed>();
  private readonly received = new Map<string, number>();

  /** Apply `fault` to the next `times` requests to the unit (default: until cleared). */
  set(host: SimHost, unitId: number, fault: SimFault, times = Number.POSITIVE_INFINITY): void {
    this.armed.set(key(host, unitId), { plan: [fault], remaining: times });
  }

  /** One fault per coming request, in order (null: answer that one normally); then normal answers. */
  script(host: SimHost, unitId: number, plan: (SimFault | null)[]): void {
    this.armed.set(key(host, unitId), { plan: [...plan], remaining: plan.length });
  }

  clear(host?: SimHost, unitId?: number): void {
    if (host === undefined) {
      this.armed.clear();
    } else if (unitId === undefined) {
      for (const k of [...this.armed.keys()]) if (k.startsWith(`${host}/`)) this.armed.delete(k);
    } else {
      this.armed.delete(key(host, unitId));
    }
  }

  /** requests the unit received (answered or not) */
  requests(host: SimHost, unitId: number): number {
    return this.received.get(key(host, unitId)) ?? 0;
  }

  /** The server's call for every request: counts it and returns the fault to apply, if any. */
  take(host: SimHost, unitId: number): SimFault | undefined {
    const k = key(host, unitId);
    this.received.set(k, (this.received.get(k) ?? 0) + 1);
    const a = this.armed.get(k);
    if (!a) return undefined;
    // the last entry of a plan repeats for the rest of its count; null is a request served normally
    const fault = a.plan.length > 1 ? a.plan.shift() : a.plan[0];
    if (--a.remaining <= 0) this.armed.delete(k);
    return fault ?? undefined;
  }
}
