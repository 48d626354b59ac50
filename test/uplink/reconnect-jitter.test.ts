/** The reconnect wait's jitter: where a fleet's gateways land after a broker restart. */
import { describe, expect, it } from 'vitest';
import { reconnectDelayMs } from '../../src/uplink/jitter.js';

describe('reconnectDelayMs', () => {
  it('stays in the upper half of the backoff step, both ends included', () => {
    expect(reconnectDelayMs(8000, () => 0)).toBe(4000);
    expect(reconnectDelayMs(8000, () => 0.5)).toBe(6000);
    expect(reconnectDelayMs(8000, () => 1 - Number.EPSILON)).toBe(8000);
  });

  it('spreads a fleet over the step instead of one instant', () => {
    // 10,000 gateways, each with its own random draw, back after a 1 s step: count them per 50 ms
    const slots = new Map<number, number>();
    for (let i = 0; i < 10_000; i++) {
      const slot = Math.floor(reconnectDelayMs(1000) / 50);
      slots.set(slot, (slots.get(slot) ?? 0) + 1);
    }
    expect([...slots.keys()].every((s) => s >= 10 && s <= 20)).toBe(true);
    // ten 50 ms slots share them: the fullest holds well under a fifth, not all 10,000
    expect(slots.size).toBeGreaterThanOrEqual(10);
    expect(Math.max(...slots.values())).toBeLessThan(2000);
  });
});
