import { describe, expect, it } from 'vitest';
import { doubling, Retry } from '../../src/core/backoff.js';

describe('doubling', () => {
  it('waits the first, then twice the wait before at each failure, never more than the most', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => doubling(250, 5000, n))).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
  });

  it('stays at the most however many failures there were (no overflow to NaN or Infinity)', () => {
    expect(doubling(1000, 30_000, 1_000_000)).toBe(30_000);
  });

  it('a most below the first is the wait from the start; a negative count is the first', () => {
    expect(doubling(1000, 400, 0)).toBe(400);
    expect(doubling(1000, 30_000, -3)).toBe(1000);
  });
});

describe('Retry', () => {
  it('waits the doubling rule from each failure, none after a success, and counts the failures in a row', () => {
    let now = 1000;
    const r = new Retry(100, 1000, () => now);
    expect(r.waitLeft()).toBeLessThanOrEqual(0);
    expect([r.failed(), r.failed(), r.failed()]).toEqual([100, 200, 400]);
    expect(r.inARow).toBe(3);
    expect(r.waitLeft()).toBe(400);
    now += 399;
    expect(r.waitLeft()).toBe(1);
    now += 1;
    expect(r.waitLeft()).toBe(0);
    r.succeeded();
    expect(r.inARow).toBe(0);
    expect(r.failed()).toBe(100);
  });

  it('a try on its way holds off another for the wait its failures give; a stop may look at once, the count kept', () => {
    let now = 0;
    const r = new Retry(100, 1000, () => now);
    r.trying();
    expect(r.waitLeft()).toBe(100);
    now = 50;
    // the try failed: the wait runs from now, the next doubled
    expect(r.failed()).toBe(100);
    expect(r.waitLeft()).toBe(100);
    r.trying();
    expect(r.waitLeft()).toBe(200);
    r.dueNow();
    expect(r.waitLeft()).toBeLessThanOrEqual(0);
    expect(r.inARow).toBe(1);
  });
});
