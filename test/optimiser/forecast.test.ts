/**
 * The forecasts as pure functions of history: a load that repeats weekly is forecast exactly, a PV
 * history that is the clear sky times a constant gives back that constant (gaps included), and the
 * error over the last week is zero for a perfect forecast and the offset for a shifted one.
 */
import { describe, expect, it } from 'vitest';
import {
  forecastError,
  forecastLoad,
  forecastPv,
  type History,
  loadSamples,
  planLoad,
  surplusLoad,
} from '../../src/optimiser/forecast.js';
import { clearSkyPlane } from '../../src/sim/solar.js';

const SLOT = 900_000;
const DAY = 86_400_000;
const site = { latDeg: 52.52, lonDeg: 13.4, tiltDeg: 30, azimuthFromSouthDeg: 0, timezone: 'Europe/Berlin' };
const from = Date.UTC(2026, 5, 15) - 2 * 3_600_000; // local midnight, CEST

function history(days: number, w: (ts: number) => number): History {
  const start = from - days * DAY;
  return { start, values: Array.from({ length: days * 96 }, (_, k) => w(start + k * SLOT)) };
}

describe('load forecast', () => {
  it('a load that repeats each working day and each weekend day is forecast exactly, day type by day type', () => {
    const weekly = (ts: number) => {
      const local = new Date(ts + 2 * 3_600_000);
      const weekend = local.getUTCDay() === 0 || local.getUTCDay() === 6;
      return 200 + (weekend ? 300 : 0) + 3 * local.getUTCHours();
    };
    const f = forecastLoad(site.timezone, history(28, weekly), from, 7 * 96);
    f.forEach((w, k) => expect(w, `slot ${k}`).toBe(weekly(from + k * SLOT)));
  });

  it('the same time on days of a type is their mean: five working days of 100 to 500 W forecast 300 W', () => {
    // day n of the history at a constant load; from (a Monday) looks back over whole weeks
    const byDay = (ts: number) => {
      const local = new Date(ts + 2 * 3_600_000);
      const d = local.getUTCDay();
      return d === 0 || d === 6 ? 900 : 100 * d;
    };
    const f = forecastLoad(site.timezone, history(28, byDay), from, 7 * 96);
    f.forEach((w, k) => {
      const d = new Date(from + k * SLOT + 2 * 3_600_000).getUTCDay();
      expect(w, `slot ${k}`).toBe(d === 0 || d === 6 ? 900 : 300);
    });
  });

  it('with one week of history missing, the other weeks still answer', () => {
    const h = history(28, () => 500);
    const values = h.values.map((v, k) => (k < 7 * 96 ? Number.NaN : v));
    expect(forecastLoad(site.timezone, { ...h, values }, from, 96).every((w) => w === 500)).toBe(true);
  });
});

describe('PV forecast', () => {
  const plane = clearSkyPlane(site);
  const slotMean = (ts: number) => (plane(ts + 150_000) + plane(ts + 450_000) + plane(ts + 750_000)) / 3;
  it('learns the ratio of production to clear sky and applies it to tomorrow', () => {
    const h = history(7, (ts) => 4.2 * slotMean(ts));
    const f = forecastPv(site, h, from, 96);
    f.forEach((w, k) => expect(Math.abs(w - 4.2 * slotMean(from + k * SLOT)), `slot ${k}`).toBeLessThan(60));
    expect(Math.max(...f)).toBeGreaterThan(3000);
    expect(f[0]).toBe(0); // midnight
  });

  it('a day of missing data leaves the ratio as it was', () => {
    const h = history(7, (ts) => (ts < from - 6 * DAY ? Number.NaN : 2 * slotMean(ts)));
    const f = forecastPv(site, h, from, 96);
    const noon = f.indexOf(Math.max(...f));
    expect(f[noon]! / slotMean(from + noon * SLOT)).toBeCloseTo(2, 1);
  });
});

describe('forecast error over the last week', () => {
  const h = history(14, (ts) => 300 + ((ts / SLOT) % 7));
  const truth = (start: number, n: number) => Array.from({ length: n }, (_, k) => 300 + ((start / SLOT + k) % 7));
  it('zero for a perfect forecast, over 7 × 96 slots', () => {
    expect(forecastError(h, from, truth)).toEqual({ maeW: 0, relative: 0, slots: 7 * 96 });
  });
  it('the offset for a shifted one', () => {
    const e = forecastError(h, from, (s, n) => truth(s, n).map((w) => w + 100));
    expect(e.maeW).toBeCloseTo(100, 9);
    expect(e.relative).toBeCloseTo(100 / 303, 2);
  });
});

describe('the load a plan sees in surplus slots', () => {
  it('is PV less the expected surplus over the load’s spread, not PV less the mean load; elsewhere the forecast', () => {
    // Monday and Tuesday 100 W, Wednesday and Thursday 900 W, Friday and the weekend 500 W: a mean of 500 W
    const spread = (ts: number) => {
      const local = new Date(ts + 2 * 3_600_000);
      const d = local.getUTCDay();
      return d === 1 || d === 2 ? 100 : d === 3 || d === 4 ? 900 : 500;
    };
    const h = history(28, spread);
    const load = forecastLoad(site.timezone, h, from, 96);
    expect(new Set(load)).toEqual(new Set([500]));
    // PV 600 W: the mean surplus is 100 W, the expected one mean(500, 500, 0, 0, 100) = 220 W on a
    // working day (the horizon's Monday), so the plan sees 380 W
    const pv = load.map((_, k) => (k < 48 ? 600 : 300));
    const seen = surplusLoad(site.timezone, h, from, pv, load);
    seen.forEach((w, k) => expect(w, `slot ${k}`).toBe(k < 48 ? 380 : 500));
    // no history: the forecast as it is
    expect(surplusLoad(site.timezone, { start: from, values: [] }, from, pv, load)).toEqual(load);
  });
});

describe('the load a plan is made on', () => {
  // Monday to Thursday 100 W, Friday 900 W, the weekend 500 W: on working days a mean of 260 W and a median of 100 W
  const skewed = (ts: number) => {
    const d = new Date(ts + 2 * 3_600_000).getUTCDay();
    return d === 5 ? 900 : d === 0 || d === 6 ? 500 : 100;
  };
  const h = history(28, skewed);

  it('the median of the day-type loads, where asked', () => {
    expect(forecastLoad(site.timezone, h, from, 96)).toEqual(new Array(96).fill(260));
    expect(forecastLoad(site.timezone, h, from, 96, 4, 'median')).toEqual(new Array(96).fill(100));
  });

  it('on a dark day (the grid fills the battery), the median rather than the mean', () => {
    expect(planLoad(site.timezone, h, from, new Array(192).fill(0))).toEqual(new Array(192).fill(100));
  });

  it('on a day with less than 1.5 times as much PV as load, the median still; in surplus slots PV less the expected surplus', () => {
    // Monday: 16 quarter hours of 2000 W and 10 W elsewhere, 1.3 times the day's 96 × 260 W; Tuesday dark
    const pv = Array.from({ length: 192 }, (_, k) => (k >= 40 && k < 56 ? 2000 : k < 96 ? 10 : 0));
    const seen = planLoad(site.timezone, h, from, pv);
    // the expected surplus at 2000 W is (16 × 1900 + 4 × 1100) / 20 = 1740 W: the plan sees 260 W there
    seen.forEach((w, k) => expect(w, `slot ${k}`).toBe(k >= 40 && k < 56 ? 260 : 100));
  });

  it('on a day with at least 1.5 times as much PV as load, the mean', () => {
    // Monday: 20 quarter hours of 2000 W, 1.6 times the day's load
    const pv = Array.from({ length: 192 }, (_, k) => (k >= 40 && k < 60 ? 2000 : k < 96 ? 10 : 0));
    const seen = planLoad(site.timezone, h, from, pv);
    seen.forEach((w, k) => expect(w, `slot ${k}`).toBe(k < 96 ? 260 : 100));
  });
});

describe('the spread the plan is made on', () => {
  it('load: the same time on days of the same type, and the slots either side when asked (the daemon: LOAD_SPREAD)', () => {
    const byHour = (ts: number) => 100 * new Date(ts + 2 * 3_600_000).getUTCHours() + ((ts / SLOT) % 4);
    const h = history(28, byHour);
    const one = loadSamples(site.timezone, h, from, 96, 4, 0);
    const three = loadSamples(site.timezone, h, from, 96, 4, 1);
    // from is a Monday: 20 working days in 4 weeks
    expect(one[40]).toHaveLength(20);
    expect(new Set(one[40])).toEqual(new Set([byHour(from + 40 * SLOT)]));
    expect(three[40]).toHaveLength(60);
    expect(new Set(three[40])).toEqual(new Set([39, 40, 41].map((k) => byHour(from + k * SLOT))));
    // the day's first slot has no slot before it
    expect(three[0]).toHaveLength(40);
  });
});
