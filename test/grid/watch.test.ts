import { describe, expect, it } from 'vitest';
import type { GridState, Reading } from '../../src/core/channels.js';
import { GridWatch } from '../../src/grid/watch.js';

const S = 'gm__GRID_METER_DERIVED';
const r = (ts: number, state?: GridState, streamId = S): Reading => ({
  streamId,
  ts,
  values: state ? { state, power_W: 1 } : { power_W: 1 },
});

function feed(w: GridWatch, states: (GridState | undefined)[]) {
  return states.map((s, i) => w.observe(r(i * 10, s))).filter((e) => e !== null);
}

describe('GridWatch', () => {
  it('reports a change once it held for `debounce` readings, stamped with its first reading', () => {
    const w = new GridWatch({ streamId: S, deviceId: 'gm', debounce: 2 });
    const events = feed(w, ['ok', 'ok', 'not_present', 'not_present', 'not_present', 'ok', 'ok']);
    expect(events).toEqual([
      { deviceId: 'gm', streamId: S, timestamp: 20, state: 'not_present' },
      { deviceId: 'gm', streamId: S, timestamp: 50, state: 'ok' },
    ]);
  });

  it('ignores a blip shorter than the debounce', () => {
    const w = new GridWatch({ streamId: S, deviceId: 'gm', debounce: 2 });
    expect(feed(w, ['ok', 'ok', 'not_present', 'ok', 'unknown', 'ok', 'ok'])).toEqual([]);
    expect(w.state).toBe('ok');
  });

  it('goes to unknown when the meter is silent and back, each one event', () => {
    const w = new GridWatch({ streamId: S, deviceId: 'gm', debounce: 1 });
    const events = feed(w, ['ok', 'unknown', 'unknown', 'ok']);
    expect(events.map((e) => e.state)).toEqual(['unknown', 'ok']);
  });

  it('takes the first state as a baseline, but reports a change from the state known before a restart', () => {
    expect(feed(new GridWatch({ streamId: S, deviceId: 'gm', debounce: 2 }), ['not_present', 'not_present'])).toEqual(
      [],
    );
    const after = feed(new GridWatch({ streamId: S, deviceId: 'gm', debounce: 2, initial: 'ok' }), [
      'not_present',
      'not_present',
    ]);
    expect(after).toEqual([{ deviceId: 'gm', streamId: S, timestamp: 0, state: 'not_present' }]);
  });

  it('readings of other streams and readings without state change nothing', () => {
    const w = new GridWatch({ streamId: S, deviceId: 'gm', debounce: 2 });
    feed(w, ['ok', 'ok']);
    expect(w.observe(r(100, 'not_present', 'other'))).toBeNull();
    expect(w.observe(r(110, 'not_present'))).toBeNull();
    expect(w.observe(r(120, undefined))).toBeNull();
    expect(w.observe(r(130, 'not_present'))?.timestamp).toBe(110);
  });

  it('refuses a debounce that is not a positive integer', () => {
    expect(() => new GridWatch({ streamId: S, deviceId: 'gm', debounce: 0 })).toThrow(RangeError);
  });
});
