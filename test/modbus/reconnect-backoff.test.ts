import { describe, expect, it } from 'vitest';
import { ReconnectBackoff } from '../../src/modbus/reconnect.js';

describe('a bus link reconnecting', () => {
  it('waits the first delay after a failed connect, doubling up to the most, and from the first again after a success', () => {
    let now = 0;
    const b = new ReconnectBackoff({ minBackoffMs: 250, maxBackoffMs: 1500, now: () => now });
    expect(b.check('inv')).toBeNull();
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      b.failed();
      const err = b.check('inv');
      waits.push(Number(/next attempt in (\d+) ms/.exec(err?.message ?? '')?.[1]));
      now += waits.at(-1)!;
      expect(b.check('inv')).toBeNull();
    }
    expect(waits).toEqual([250, 500, 1000, 1500, 1500]);
    b.succeeded();
    b.failed();
    expect(b.check('inv')?.message).toMatch(/next attempt in 250 ms/);
  });
});
