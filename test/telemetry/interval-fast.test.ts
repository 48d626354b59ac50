import { Interval } from 'luxon';
import { describe, expect, it } from 'vitest';
import { parseInterval } from '../../src/telemetry/interval.js';
import { fastUtcInterval } from '../../src/telemetry/interval-fast.js';
import { int, pick, type Rng, rng } from '../fuzz/gen.js';

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** a valid value mostly, an out-of-range one now and then */
const field = (r: Rng, good: number[], bad: number[]) => (r() < 0.93 ? pick(r, good) : pick(r, bad));

/** instants around every field's edges, mostly well-formed so both paths get work */
function instant(r: Rng): string {
  const y = field(r, [2026, 2024, 2100, 2000, 1999, 1000, 9999, 1970, 1969], [999, 10000, 0]);
  const mo = field(r, [1, 2, 3, 4, 6, 9, 11, 12], [0, 13]);
  const d = field(r, [1, 15, 28, 29, 30, 31], [0, 32]);
  const h = field(r, [0, 1, 12, 23], [24]);
  const mi = field(r, [0, 15, 59], [60]);
  const s = field(r, [0, 30, 59], [60]);
  const sep = r() < 0.95 ? 'T' : pick(r, ['t', ' ']);
  const zone = r() < 0.9 ? 'Z' : pick(r, ['z', '+00:00', '+01:00', '-0530', '', '.000Z', '.5Z']);
  const year = y < 1000 && r() < 0.5 ? String(y) : pad(y, 4);
  return `${year}-${pad(mo)}-${pad(d)}${sep}${pad(h)}:${pad(mi)}:${pad(s)}${zone}`;
}

function duration(r: Rng): string {
  const n = pick(r, [0, 1, 6, 15, 24, 90, 400, 9999, 10000, 123456]);
  if (r() < 0.6) return pick(r, [`P${n}D`, `PT${n}H`, `PT${n}M`, `PT${n}S`]);
  return pick(r, [
    `P${n}W`,
    `P${n}M`,
    `P${n}Y`,
    'P',
    'PT',
    'P1DT1H',
    'PT1.5H',
    'pt1h',
    `P${n}d`,
    'PT-15M',
    `PT${n}H${n}M`,
  ]);
}

function candidate(r: Rng): string {
  const part = () => (r() < 0.6 ? instant(r) : duration(r));
  switch (int(r, 8)) {
    case 0:
      return part();
    case 1:
      return `${part()}/${part()}/${part()}`;
    default:
      return `${part()}/${part()}`;
  }
}

describe('fastUtcInterval', () => {
  it('answers only where luxon gives the same range, on 20,000 seeded near-miss spellings', () => {
    const r = rng(20261123);
    let answered = 0;
    let declinedButValid = 0;
    for (let i = 0; i < 20_000; i++) {
      const t = candidate(r);
      const fast = fastUtcInterval(t);
      const iv = Interval.fromISO(t, { zone: 'utc' });
      if (fast === undefined) {
        if (iv.isValid) declinedButValid++;
        continue;
      }
      answered++;
      expect(iv.isValid, t).toBe(true);
      expect(fast, t).toEqual({ start: iv.start!.toMillis(), end: iv.end!.toMillis() });
    }
    // both sides of the line get exercised: the fast path answers often, and luxon still sees
    // valid spellings the fast path leaves to it (offsets, weeks, months, fractions)
    expect(answered).toBeGreaterThan(1500);
    expect(declinedButValid).toBeGreaterThan(1500);
  });

  it('leaves an end before the start to luxon, so the refusal keeps its wording', () => {
    expect(fastUtcInterval('2026-11-02T00:00:00Z/2026-11-01T00:00:00Z')).toBeUndefined();
    expect(() => parseInterval('2026-11-02T00:00:00Z/2026-11-01T00:00:00Z')).toThrow(/ends before it starts/);
  });

  it('reads the spellings the API itself writes, and durations in UTC whole days', () => {
    expect(fastUtcInterval('2026-03-29T00:00:00Z/P1D')).toEqual({
      start: Date.parse('2026-03-29T00:00:00Z'),
      end: Date.parse('2026-03-30T00:00:00Z'),
    });
    expect(fastUtcInterval('PT90M/2026-11-01T12:00:00Z')).toEqual({
      start: Date.parse('2026-11-01T10:30:00Z'),
      end: Date.parse('2026-11-01T12:00:00Z'),
    });
    expect(fastUtcInterval('2024-02-29T23:45:00Z/2024-03-01T00:00:00Z')).toEqual({
      start: Date.parse('2024-02-29T23:45:00Z'),
      end: Date.parse('2024-03-01T00:00:00Z'),
    });
    expect(fastUtcInterval('2026-02-29T00:00:00Z/P1D')).toBeUndefined();
  });
});
