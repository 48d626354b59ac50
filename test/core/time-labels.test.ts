import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { STEP_SHOWN_MS, TimeLabels } from '../../src/core/time-labels.js';

const T0 = Date.parse('2026-11-27T10:00:00Z');
const BUILD = Date.parse('2026-11-01T00:00:00Z');

function labels(start = T0, stored = -Infinity) {
  const clock = new ManualClock(start);
  const refusals: (string | null)[] = [];
  const l = new TimeLabels({
    clock,
    notBefore: BUILD,
    newestStored: () => stored,
    onRefusal: (why) => refusals.push(why),
  });
  return { clock, l, refusals };
}

describe('ManualClock.step', () => {
  it('moves the wall clock alone: mono() and timers stay on their own time', () => {
    const c = new ManualClock(T0);
    let fired = 0;
    c.setTimeout(() => fired++, 1000);
    c.step(-600_000);
    expect(c.now()).toBe(T0 - 600_000);
    expect(c.mono()).toBe(T0);
    c.advance(1000);
    expect(fired).toBe(1);
    expect(c.now()).toBe(T0 - 599_000);
  });
});

describe('TimeLabels', () => {
  it('sees a step only when the wall clock moves apart from the monotonic one', () => {
    const { clock, l } = labels();
    expect(l.observe()).toBeNull();
    clock.advance(60_000);
    expect(l.observe()).toBeNull();
    clock.advance(10_000);
    clock.step(1_500); // less than the threshold: NTP's slew and a late timer look like this
    expect(l.observe()).toBeNull();
    clock.step(-600_000);
    expect(l.observe()).toMatchObject({ byMs: -600_000, at: clock.now() });
    clock.advance(10_000);
    expect(l.observe()).toBeNull();
  });

  it('labels in order, refuses a time before the last label until the wall clock reaches it', () => {
    const { clock, l, refusals } = labels();
    expect(l.label(clock.now())).toEqual({ ok: true, at: T0 });
    clock.advance(10_000);
    expect(l.label(clock.now())).toEqual({ ok: true, at: T0 + 10_000 });
    clock.step(-60_000);
    clock.advance(10_000);
    expect(l.label(clock.now())).toEqual({ ok: false, why: 'behind' });
    expect(l.problems().join('\n')).toMatch(/stepped back by 60 s.*\n.*not recorded until it passes/);
    for (let i = 0; i < 4; i++) {
      clock.advance(10_000);
      expect(l.label(clock.now()).ok).toBe(false);
    }
    clock.advance(10_000);
    expect(l.label(clock.now())).toEqual({ ok: true, at: T0 + 10_000 });
    expect(l.unlabelled).toBe(5);
    expect(refusals).toEqual(['behind', null]);
  });

  it('refuses every label before the build date, and a label before the newest stored bucket', () => {
    const early = labels(Date.parse('2020-01-01T00:00:00Z'));
    expect(early.l.plausible()).toBe(false);
    expect(early.l.label(early.clock.now())).toEqual({ ok: false, why: 'implausible' });
    expect(early.l.problems().join()).toMatch(/2020-01-01T00:00:00Z, before this build \(2026-11-01T00:00:00Z\)/);
    const stored = labels(T0, T0 + 900_000);
    expect(stored.l.label(T0)).toEqual({ ok: false, why: 'behind' });
    expect(stored.l.label(T0 + 899_999)).toEqual({ ok: false, why: 'behind' });
    expect(stored.l.label(T0 + 900_001)).toEqual({ ok: true, at: T0 + 900_001 });
  });

  // issue 41, finding 2: a demo at --speed 60 logged "behind" with now == newest and dropped the poll
  it('equal times are not behind: a label at the newest stored bucket end, or the last label again', () => {
    const stored = labels(T0, T0 + 900_000);
    // the stored bucket ends there: a reading at that instant opens the next one (the bucketer takes it)
    expect(stored.l.label(T0 + 900_000)).toEqual({ ok: true, at: T0 + 900_000 });
    const { clock, l, refusals } = labels();
    expect(l.label(clock.now())).toEqual({ ok: true, at: T0 });
    // a scaled clock reads in steps of `speed` ms: a timer firing within one step reads the same time
    expect(l.label(clock.now())).toEqual({ ok: true, at: T0 });
    expect(refusals).toEqual([]);
    expect(l.unlabelled).toBe(0);
  });

  it('shows a step in health for an hour, measured on the monotonic clock', () => {
    const { clock, l } = labels();
    l.observe();
    clock.step(86_400_000);
    l.observe();
    expect(l.problems()).toEqual([expect.stringMatching(/stepped forward by 86400 s/)]);
    clock.advance(STEP_SHOWN_MS - 1000);
    expect(l.problems()).toHaveLength(1);
    clock.advance(2000);
    expect(l.problems()).toEqual([]);
  });
});
