import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { BUCKET_MS } from '../../src/telemetry/align.js';
import { CloseTimer } from '../../src/telemetry/close-timer.js';

const T0 = Date.parse('2026-11-27T10:05:00Z');
const GRACE = 15_000;

function timer(start = T0, ok: () => boolean = () => true) {
  const clock = new ManualClock(start);
  const closed: string[] = [];
  const t = new CloseTimer(
    clock,
    GRACE,
    (b) => {
      const done = ok();
      closed.push(`${new Date(b).toISOString().slice(0, 16)}${done ? '' : ' failed'}`);
      return done;
    },
    60_000,
    10_000,
  );
  t.start();
  return { clock, closed };
}

describe('CloseTimer', () => {
  it('closes each boundary once, a grace after it', () => {
    const { clock, closed } = timer();
    clock.advance(10 * 60_000 + GRACE - 1);
    expect(closed).toEqual([]);
    clock.advance(1);
    expect(closed).toEqual(['2026-11-27T10:15']);
    clock.advance(BUCKET_MS);
    expect(closed).toEqual(['2026-11-27T10:15', '2026-11-27T10:30']);
  });

  it('after a step forward (a Pi set by NTP) closes the new present within a minute, not 15 late', () => {
    const y2020 = Date.parse('2020-01-01T12:05:00Z');
    const { clock, closed } = timer(y2020);
    clock.advance(60_000);
    clock.step(T0 + 11 * 60_000 - clock.now()); // now 10:16 of the real day
    clock.advance(60_000);
    expect(closed).toEqual(['2026-11-27T10:15']);
  });

  it('after a step back closes no boundary twice', () => {
    const { clock, closed } = timer();
    clock.advance(11 * 60_000);
    clock.step(-10 * 60_000);
    clock.advance(20 * 60_000);
    expect(closed).toEqual(['2026-11-27T10:15']);
  });

  it('tries a failed close again every retry period until it is written', () => {
    let failing = true;
    const { clock, closed } = timer(T0, () => !failing);
    clock.advance(10 * 60_000 + GRACE);
    clock.advance(10_000);
    expect(closed).toEqual(['2026-11-27T10:15 failed', '2026-11-27T10:15 failed']);
    failing = false;
    clock.advance(10_000);
    clock.advance(60_000);
    expect(closed).toEqual(['2026-11-27T10:15 failed', '2026-11-27T10:15 failed', '2026-11-27T10:15']);
  });
});
