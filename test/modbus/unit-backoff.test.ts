import { describe, expect, it } from 'vitest';
import { UnitBackoff } from '../../src/modbus/unit-backoff.js';

describe('per-unit backoff', () => {
  it('skips a unit after timeouts in a row, doubling the window, until it answers', () => {
    let now = 0;
    const b = new UnitBackoff({ failuresBeforeBackoff: 2, minBackoffMs: 1000, maxBackoffMs: 4000, now: () => now });
    expect(b.check(3, 'bus')).toBeNull();
    b.timedOut(3);
    expect(b.check(3, 'bus')).toBeNull(); // one lost answer is noise
    b.timedOut(3);
    const skip = b.check(3, 'bus');
    expect(skip).toMatchObject({ kind: 'timeout', skipped: true });
    expect(skip?.message).toMatch(/unit 3 on bus did not answer 2 times in a row; skipped for 1\.0 s more/);
    expect(b.check(4, 'bus')).toBeNull(); // other units are not affected
    now = 1000;
    expect(b.check(3, 'bus')).toBeNull(); // its next attempt
    b.timedOut(3);
    now = 2999;
    expect(b.check(3, 'bus')).not.toBeNull(); // 2 s window now
    now = 3000;
    expect(b.check(3, 'bus')).toBeNull();
    b.timedOut(3);
    b.timedOut(3);
    now = 3000 + 3999;
    expect(b.check(3, 'bus')).not.toBeNull(); // capped at 4 s
    now = 3000 + 4000;
    expect(b.check(3, 'bus')).toBeNull();
    b.answered(3);
    b.timedOut(3);
    expect(b.check(3, 'bus')).toBeNull(); // an answer starts the count again
    expect(b.timeoutsOf(3)).toBe(1);
  });
});
