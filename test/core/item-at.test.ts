import { describe, expect, it } from 'vitest';
import { itemAt } from '../../src/core/item-at.js';

describe('itemAt', () => {
  it('returns the element at a bounded index, from arrays and typed arrays alike', () => {
    expect(itemAt(['a', 'b'], 1)).toBe('b');
    expect(itemAt(Float64Array.of(0, 2.5), 1)).toBe(2.5);
    // 0 and '' are values, not misses
    expect(itemAt([0], 0)).toBe(0);
    expect(itemAt([''], 0)).toBe('');
  });

  it('throws a RangeError naming the index for a miss, instead of handing on undefined', () => {
    expect(() => itemAt([1, 2, 3], 3)).toThrow(new RangeError('index 3 outside 0..2'));
    expect(() => itemAt(new Uint16Array(2), -1)).toThrow(RangeError);
    expect(() => itemAt([1, 2], 0.5)).toThrow(RangeError);
  });
});
