import { describe, expect, it } from 'vitest';
import { doubling } from '../../src/core/backoff.js';

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
