import { describe, expect, it } from 'vitest';
import { ManualClock, ScaledClock } from '../../src/core/clock.js';

describe('ManualClock', () => {
  it('fires timers in time order while advancing', () => {
    const c = new ManualClock(1000);
    const seen: string[] = [];
    c.setTimeout(() => seen.push(`b@${c.now()}`), 20);
    c.setTimeout(() => seen.push(`a@${c.now()}`), 10);
    const t = c.setTimeout(() => seen.push('never'), 15);
    c.clearTimeout(t);
    c.advance(25);
    expect(seen).toEqual(['a@1010', 'b@1020']);
    expect(c.now()).toBe(1025);
  });
});

describe('ScaledClock', () => {
  it('refuses a speed that is not a positive number', () => {
    expect(() => new ScaledClock(0)).toThrow(RangeError);
    expect(() => new ScaledClock(Number.NaN)).toThrow(RangeError);
  });
  it('starts at the origin it is given', () => {
    const c = new ScaledClock(60, 5_000_000);
    expect(c.now()).toBeGreaterThanOrEqual(5_000_000);
  });
});
