import { describe, expect, it } from 'vitest';
import {
  floorToBucket,
  floorToHour,
  localDayBoundaries,
  localDayStart,
  localMonthBoundaries,
  periodBoundaries,
} from '../../src/telemetry/align.js';

const ms = (iso: string) => Date.parse(iso);
const H = 3_600_000;
const lengths = (b: number[]) => b.slice(1).map((x, i) => (x - b[i]!) / H);

describe('UTC alignment', () => {
  it('floors to 15 minutes and hours', () => {
    expect(floorToBucket(ms('2026-11-23T00:29:59.999Z'))).toBe(ms('2026-11-23T00:15:00Z'));
    expect(floorToBucket(ms('2026-11-23T00:30:00Z'))).toBe(ms('2026-11-23T00:30:00Z'));
    expect(floorToHour(ms('2026-11-23T05:59:00Z'))).toBe(ms('2026-11-23T05:00:00Z'));
  });

  it('lists hourly boundaries covering a range that does not start on the hour', () => {
    expect(periodBoundaries('PT1H', ms('2026-11-23T00:30:00Z'), ms('2026-11-23T02:00:00Z'), 'UTC')).toEqual([
      ms('2026-11-23T00:00:00Z'),
      ms('2026-11-23T01:00:00Z'),
      ms('2026-11-23T02:00:00Z'),
    ]);
  });
});

describe('local day boundaries', () => {
  it('Europe/Berlin: the spring-forward day has 23 h, the fall-back day 25 h', () => {
    const spring = localDayBoundaries(ms('2026-03-28T12:00:00Z'), ms('2026-03-30T12:00:00Z'), 'Europe/Berlin');
    expect(spring).toEqual([
      ms('2026-03-27T23:00:00Z'),
      ms('2026-03-28T23:00:00Z'),
      ms('2026-03-29T22:00:00Z'),
      ms('2026-03-30T22:00:00Z'),
    ]);
    expect(lengths(spring)).toEqual([24, 23, 24]);

    const fall = localDayBoundaries(ms('2026-10-25T00:00:00Z'), ms('2026-10-26T00:00:00Z'), 'Europe/Berlin');
    expect(fall[0]).toBe(ms('2026-10-24T22:00:00Z'));
    expect(lengths(fall)).toEqual([25, 24]);
  });

  it('a zone without DST has 24 h days all year', () => {
    const b = localDayBoundaries(ms('2026-01-01T00:00:00Z'), ms('2027-01-01T00:00:00Z'), 'Asia/Tokyo');
    expect(b[0]).toBe(ms('2025-12-31T15:00:00Z'));
    expect(new Set(lengths(b))).toEqual(new Set([24]));
    expect(localDayStart(ms('2026-06-01T14:59:00Z'), 'Asia/Tokyo')).toBe(ms('2026-05-31T15:00:00Z'));
  });

  it('local months follow the zone, including the DST change inside March', () => {
    const b = localMonthBoundaries(ms('2026-03-10T00:00:00Z'), ms('2026-04-05T00:00:00Z'), 'Europe/Berlin');
    expect(b).toEqual([ms('2026-02-28T23:00:00Z'), ms('2026-03-31T22:00:00Z'), ms('2026-04-30T22:00:00Z')]);
  });

  it('refuses an unknown zone', () => {
    expect(() => localDayStart(0, 'Mars/Olympus')).toThrow(/Mars\/Olympus/);
  });
});
