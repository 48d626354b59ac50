/** The fair share of limits.http.maxUnsentMiB (src/api/http/request-gate.ts) as plain logic. */
import { describe, expect, it } from 'vitest';
import { overBudget } from '../../src/api/http/request-gate.js';

const MiB = 1024 * 1024;
const conn = (addr: string, mib: number) => ({ addr, unsent: mib * MiB });

describe('the unsent answer budget', () => {
  it('within the budget every address is served', () => {
    expect(overBudget([conn('a', 10), conn('b', 5)], 'a', 16 * MiB)).toBeNull();
  });

  it('past it, an address holding at least an even share is refused, naming the holders; one holding none is served', () => {
    const held = [conn('a', 9), conn('a', 6), conn('b', 3)];
    // a holds 15 of 18: more than 16 / 2
    expect(overBudget(held, 'a', 16 * MiB)).toBe('a×15360KiB, b×3072KiB');
    // b holds 3, below 16 / 2
    expect(overBudget(held, 'b', 16 * MiB)).toBeNull();
    // a partner with nothing unread: its share would be 16 / 3
    expect(overBudget(held, 'partner', 16 * MiB)).toBeNull();
  });

  it('eight addresses holding alike are all refused past the budget, a ninth with a little unread is not', () => {
    const held = [...Array.from({ length: 8 }, (_, i) => conn(`h${i}`, 2.5)), conn('partner', 0.1)];
    for (let i = 0; i < 8; i++) expect(overBudget(held, `h${i}`, 16 * MiB)).not.toBeNull();
    expect(overBudget(held, 'partner', 16 * MiB)).toBeNull();
  });
});
