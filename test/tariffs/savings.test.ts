/**
 * Savings on small fixtures whose numbers are worked out by hand below. Per 15-minute bucket:
 *   H = house W * 0.25 h / 1000, I = max(grid, 0) * 0.25 / 1000, E = max(-grid, 0) * 0.25 / 1000  (kWh)
 *   savings = H * pImport - (I * pImport - E * pExport)
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors.js';
import { type SavingsResolution, siteSavings } from '../../src/tariffs/savings.js';
import { createTariff } from '../../src/tariffs/write.js';
import { parseInterval } from '../../src/telemetry/interval.js';
import { type Fixture, FLAT, fixture, GRID, ms, siteConfig } from './fixture.js';

const LATER = ms('2027-06-01T00:00:00Z');
const savings = (f: Fixture, interval: string, resolution: SavingsResolution, now = LATER) =>
  siteSavings(f.db, f.site, { range: parseInterval(interval), resolution, now });

/** the hour 10:00-11:00Z of 1 June 2026 (a Monday) with the four buckets of the flat-tariff example */
function hourOfFour(f: Fixture): void {
  f.both('2026-06-01T10:00:00Z', 2000, 400); // H 0.5, I 0.1
  f.both('2026-06-01T10:15:00Z', 1200, -800); // H 0.3, E 0.2  (export)
  f.both('2026-06-01T10:30:00Z', 1000, 1000); // H 0.25, I 0.25 (the system did nothing)
  f.both('2026-06-01T10:45:00Z', 400, -3600); // H 0.1, E 0.9  (export)
}

describe('savings with a flat tariff (import 0.30, export 0.08 EUR/kWh)', () => {
  it('PT15M: one entry per bucket, including buckets that export', () => {
    const f = fixture(siteConfig(FLAT));
    hourOfFour(f);
    const r = savings(f, '2026-06-01T10:00:00Z/PT1H', 'PT15M');
    expect(r.currency).toBe('EUR');
    expect(r.skipped).toEqual({ noData: 0, noPrice: 0 });
    expect(r.entries).toEqual([
      // 0.5*0.30 - 0.1*0.30 = 0.15 - 0.03
      { interval: '2026-06-01T10:00:00Z/2026-06-01T10:15:00Z', savings: 0.12 },
      // 0.3*0.30 - (0 - 0.2*0.08) = 0.09 + 0.016
      { interval: '2026-06-01T10:15:00Z/2026-06-01T10:30:00Z', savings: 0.106 },
      // 0.25*0.30 - 0.25*0.30
      { interval: '2026-06-01T10:30:00Z/2026-06-01T10:45:00Z', savings: 0 },
      // 0.1*0.30 - (0 - 0.9*0.08) = 0.03 + 0.072
      { interval: '2026-06-01T10:45:00Z/2026-06-01T11:00:00Z', savings: 0.102 },
    ]);
  });

  it('PT1H sums the buckets; missing buckets are counted as noData', () => {
    const f = fixture(siteConfig(FLAT));
    hourOfFour(f);
    f.put('hm', '2026-06-01T11:00:00Z', 500); // the house without the grid: no data
    // 11:15 nothing at all
    const r = savings(f, '2026-06-01T10:00:00Z/2026-06-01T11:30:00Z', 'PT1H');
    // 0.12 + 0.106 + 0 + 0.102
    expect(r.entries).toEqual([{ interval: '2026-06-01T10:00:00Z/2026-06-01T11:00:00Z', savings: 0.328 }]);
    // the query is widened to whole hours (design.md "partial periods"): 11:00 to 11:45, all without data
    expect(r.skipped).toEqual({ noData: 4, noPrice: 0 });
  });

  it('buckets not closed by now are neither summed nor skipped', () => {
    const f = fixture(siteConfig(FLAT));
    hourOfFour(f);
    // at 10:40 the buckets 10:00 and 10:15 have ended; 10:30 is open, 10:45 to come
    const r = savings(f, '2026-06-01T10:00:00Z/PT1H', 'PT1H', ms('2026-06-01T10:40:00Z'));
    expect(r.entries).toEqual([{ interval: '2026-06-01T10:00:00Z/2026-06-01T11:00:00Z', savings: 0.226 }]); // 0.12 + 0.106
    expect(r.skipped).toEqual({ noData: 0, noPrice: 0 });
  });

  it('an interval that cuts a period is widened to whole periods: the entry is the whole hour, label and value', () => {
    const f = fixture(siteConfig(FLAT));
    hourOfFour(f);
    const r = savings(f, '2026-06-01T10:05:00Z/2026-06-01T10:50:00Z', 'PT1H');
    // all four buckets of 10:00-11:00, as a query for the whole hour answers
    expect(r).toEqual(savings(f, '2026-06-01T10:00:00Z/PT1H', 'PT1H'));
    expect(r.entries).toEqual([{ interval: '2026-06-01T10:00:00Z/2026-06-01T11:00:00Z', savings: 0.328 }]);
  });

  /**
   * Europe/Berlin leaves summer time on Sunday 25 October 2026 at 01:00Z (03:00 CEST -> 02:00 CET),
   * so local October is 2026-09-30T22:00Z .. 2026-10-31T23:00Z, 31 days and one hour.
   */
  describe('P1M and P1D in Europe/Berlin across the end of summer time', () => {
    function autumn(): Fixture {
      const f = fixture(siteConfig(FLAT));
      f.both('2026-09-30T21:45:00Z', 4000, 0); // 23:45 CEST 30 Sep -> September: H 1.0 -> 1.0*0.30 = 0.30
      f.both('2026-09-30T22:00:00Z', 800, 400); // 00:00 CEST 1 Oct -> October: 0.2*0.30 - 0.1*0.30 = 0.03
      f.both('2026-10-25T00:45:00Z', 2000, -2000); // 02:45 CEST 25 Oct: 0.5*0.30 + 0.5*0.08 = 0.15 + 0.04 = 0.19
      f.both('2026-10-25T01:45:00Z', 2000, -2000); // 02:45 CET, the same wall time again: 0.19
      f.both('2026-10-31T22:45:00Z', 400, 0); // 23:45 CET 31 Oct -> October: 0.1*0.30 = 0.03
      f.both('2026-10-31T23:00:00Z', 400, 400); // 00:00 CET 1 Nov -> November: 0.1*0.30 - 0.1*0.30 = 0
      // December: no data at all
      return f;
    }

    it('P1M: calendar months on local midnight, a month without data left out and counted', () => {
      // local 1 Sep 2026 00:00 CEST .. 1 Jan 2027 00:00 CET
      const r = savings(autumn(), '2026-08-31T22:00:00Z/2026-12-31T23:00:00Z', 'P1M');
      expect(r.entries).toEqual([
        { interval: '2026-08-31T22:00:00Z/2026-09-30T22:00:00Z', savings: 0.3 },
        // 0.03 + 0.19 + 0.19 + 0.03
        { interval: '2026-09-30T22:00:00Z/2026-10-31T23:00:00Z', savings: 0.44 },
        { interval: '2026-10-31T23:00:00Z/2026-11-30T23:00:00Z', savings: 0 },
      ]);
      // 30 + 31 + 30 + 31 = 122 days of 96 buckets, plus the 4 of October's extra hour: 11716;
      // 6 of them have data (1 in September, 4 in October, 1 in November)
      expect(r.skipped).toEqual({ noData: 11716 - 6, noPrice: 0 });
    });

    it('P1D: 25 October is 25 hours long and holds both 02:45', () => {
      const r = savings(autumn(), '2026-10-24T22:00:00Z/2026-10-26T23:00:00Z', 'P1D');
      expect(r.entries).toEqual([{ interval: '2026-10-24T22:00:00Z/2026-10-25T23:00:00Z', savings: 0.38 }]);
      // 25 h + 24 h = 196 buckets, 2 with data
      expect(r.skipped.noData).toBe(196 - 2);
    });

    it('an interval given with a local offset selects the same months', () => {
      const r = savings(autumn(), '2026-10-01T00:00:00+02:00/2026-11-01T00:00:00+01:00', 'P1M');
      expect(r.entries).toEqual([{ interval: '2026-09-30T22:00:00Z/2026-10-31T23:00:00Z', savings: 0.44 }]);
    });
  });
});

describe('savings with a dynamic tariff', () => {
  function withDynamic(
    kind: 'both' | 'import',
    values: { start: string; end: string; importPrice?: number; exportPrice?: number }[],
  ): Fixture {
    const probe = fixture(siteConfig(FLAT));
    const t = createTariff(
      probe.db,
      {
        name: 'day-ahead',
        currency: 'EUR',
        timezone: 'Europe/Berlin',
        kind,
        values: values.map((v) => ({ ...v, start: ms(v.start), end: ms(v.end) })),
      },
      { clientId: 'partner', siteOwner: false },
      { quota: probe.site.config.limits.dynamicTariffs, nowMs: 0 },
      0,
    );
    const f = fixture(siteConfig(['tariff:', '  type: dynamic', `  tariffId: ${t.id}`]), probe.db);
    hourOfFour(f);
    return f;
  }

  it('prices per value, negative prices included; a bucket without a value is counted as noPrice', () => {
    const f = withDynamic('both', [
      { start: '2026-06-01T10:00:00Z', end: '2026-06-01T10:30:00Z', importPrice: 0.4, exportPrice: 0.1 },
      // 10:30-10:45: no value
      { start: '2026-06-01T10:45:00Z', end: '2026-06-01T11:00:00Z', importPrice: -0.05, exportPrice: -0.1 },
    ]);
    const r = savings(f, '2026-06-01T10:00:00Z/PT1H', 'PT15M');
    expect(r.entries).toEqual([
      { interval: '2026-06-01T10:00:00Z/2026-06-01T10:15:00Z', savings: 0.16 }, // 0.5*0.4 - 0.1*0.4 = 0.20 - 0.04
      { interval: '2026-06-01T10:15:00Z/2026-06-01T10:30:00Z', savings: 0.14 }, // 0.3*0.4 + 0.2*0.1 = 0.12 + 0.02
      // 0.1*(-0.05) - (0 - 0.9*(-0.10)) = -0.005 - 0.09: exporting at a negative price costs money
      { interval: '2026-06-01T10:45:00Z/2026-06-01T11:00:00Z', savings: -0.095 },
    ]);
    expect(r.skipped).toEqual({ noData: 0, noPrice: 1 });
    expect(savings(f, '2026-06-01T10:00:00Z/PT1H', 'PT1H').entries).toEqual([
      { interval: '2026-06-01T10:00:00Z/2026-06-01T11:00:00Z', savings: 0.205 },
    ]);
  });

  it('an import-only tariff prices the buckets that do not export; the exporting ones are noPrice', () => {
    const f = withDynamic('import', [{ start: '2026-06-01T10:00:00Z', end: '2026-06-01T11:00:00Z', importPrice: 0.4 }]);
    const r = savings(f, '2026-06-01T10:00:00Z/PT1H', 'PT1H');
    // 10:00: 0.16 as above; 10:30: 0.25*0.4 - 0.25*0.4 = 0; 10:15 and 10:45 export
    expect(r.entries).toEqual([{ interval: '2026-06-01T10:00:00Z/2026-06-01T11:00:00Z', savings: 0.16 }]);
    expect(r.skipped).toEqual({ noData: 0, noPrice: 2 });
  });
});

describe('savings with a time-of-use tariff in local time', () => {
  const TOU = [
    'tariff:',
    '  type: time-of-use',
    '  periods:',
    "    - { days: [mon, tue, wed, thu, fri], from: '07:00', to: '22:00', importPrice: 0.40, exportPrice: 0.08 }",
    "    - { days: [sat, sun], from: '07:00', to: '22:00', importPrice: 0.30, exportPrice: 0.08 }",
    "    - { from: '22:00', to: '07:00', importPrice: 0.20, exportPrice: 0.08 }",
  ];

  it('picks the period by local weekday and time, in summer and in winter time', () => {
    const f = fixture(siteConfig(TOU));
    // every bucket: house 4000 W, grid 0 -> H = 1 kWh, savings = the import price
    const at = [
      '2026-06-01T04:45:00Z',
      '2026-06-01T05:00:00Z',
      '2026-06-06T10:00:00Z',
      '2026-12-07T05:45:00Z',
      '2026-12-07T06:00:00Z',
    ];
    for (const t of at) f.both(t, 4000, 0);
    const got = at.map((t) => savings(f, `${t}/PT15M`, 'PT15M').entries[0]!.savings);
    expect(got).toEqual([
      0.2, // Mon 1 Jun 06:45 CEST: night
      0.4, // Mon 1 Jun 07:00 CEST: weekday
      0.3, // Sat 6 Jun 12:00 CEST: weekend
      0.2, // Mon 7 Dec 06:45 CET: night
      0.4, // Mon 7 Dec 07:00 CET: weekday
    ]);
  });
});

describe('savings sources', () => {
  it('uses the derived consumption stream on a site without a house meter', () => {
    const f = fixture(siteConfig(FLAT, { houseMeter: false }));
    f.both('2026-06-01T10:00:00Z', 2000, 400);
    expect(savings(f, '2026-06-01T10:00:00Z/PT15M', 'PT15M').entries).toEqual([
      { interval: '2026-06-01T10:00:00Z/2026-06-01T10:15:00Z', savings: 0.12 },
    ]);
  });

  it('a stream the caller may not read counts as missing', () => {
    const f = fixture(siteConfig(FLAT));
    hourOfFour(f);
    const r = siteSavings(f.db, f.site, {
      range: parseInterval('2026-06-01T10:00:00Z/PT1H'),
      resolution: 'PT1H',
      now: LATER,
      sees: (id) => id === GRID,
    });
    expect(r).toEqual({ currency: 'EUR', entries: [], skipped: { noData: 4, noPrice: 0 } });
  });

  it('refuses with 409 when the site has no usable tariff', () => {
    const code = (f: Fixture) => {
      try {
        savings(f, '2026-06-01T10:00:00Z/PT1H', 'PT1H');
      } catch (e) {
        return e instanceof ApiError ? `${e.statusCode} ${e.code} ${e.message}` : String(e);
      }
      return 'no error';
    };
    expect(code(fixture(siteConfig()))).toMatch(/^409 SITE_TARIFF_UNAVAILABLE site.yaml has no tariff section/);
    const missing = fixture(siteConfig(['tariff:', '  type: dynamic', '  tariffId: not-stored']));
    expect(code(missing)).toMatch(/^409 SITE_TARIFF_UNAVAILABLE .*'not-stored'.*is not stored/);
    const usd = fixture(siteConfig(FLAT));
    const t = createTariff(
      usd.db,
      { name: 'x', currency: 'USD', timezone: 'UTC', kind: 'both', values: [] },
      { clientId: 'partner', siteOwner: false },
      { quota: usd.site.config.limits.dynamicTariffs, nowMs: 0 },
      0,
    );
    expect(code(fixture(siteConfig(['tariff:', '  type: dynamic', `  tariffId: ${t.id}`]), usd.db))).toMatch(
      /is in USD, the site in EUR/,
    );
  });
});

describe('what the battery saved (batterySavings, a sitegw addition)', () => {
  const BATTERY = 'inv__bb_agg';
  const noBattery = () => fixture(siteConfig(FLAT));
  const batterySite = () => {
    const config = siteConfig([
      '  - { id: bat, role: battery, profile: sunspec, connection: { type: tcp, host: 127.0.0.1, unitId: 4 } }',
      ...FLAT,
    ]);
    return fixture(config);
  };
  /** 10:00-11:00Z: discharging into the house, storing surplus PV, charging from the grid, no battery reading */
  function hour(f: Fixture): void {
    f.both('2026-06-01T10:00:00Z', 1000, 200);
    f.put(BATTERY, '2026-06-01T10:00:00Z', -800); // without it the grid carries 1,000 W
    f.both('2026-06-01T10:15:00Z', 600, -400);
    f.put(BATTERY, '2026-06-01T10:15:00Z', 1000); // without it 1,400 W go out
    f.both('2026-06-01T10:30:00Z', 300, 2300);
    f.put(BATTERY, '2026-06-01T10:30:00Z', 2000); // charging from the grid
    f.both('2026-06-01T10:45:00Z', 500, 500); // no battery bucket
  }

  it('per bucket: the grid cost without the battery minus the cost as operated', () => {
    expect(noBattery().site.stream(BATTERY)).toBeUndefined();
    const f = batterySite();
    expect(f.site.stream(BATTERY)).toBeDefined();
    hour(f);
    const r = savings(f, '2026-06-01T10:00:00Z/PT1H', 'PT15M');
    expect(r.entries).toEqual([
      // without: 0.25 kWh * 0.30 = 0.075; as operated 0.05 * 0.30 = 0.015
      { interval: '2026-06-01T10:00:00Z/2026-06-01T10:15:00Z', savings: 0.06, batterySavings: 0.06 },
      // without: -0.35 * 0.08 = -0.028; as operated -0.1 * 0.08 = -0.008: storing gave up the export
      { interval: '2026-06-01T10:15:00Z/2026-06-01T10:30:00Z', savings: 0.053, batterySavings: -0.02 },
      // without: 0.075 * 0.30 = 0.0225; as operated 0.575 * 0.30 = 0.1725
      { interval: '2026-06-01T10:30:00Z/2026-06-01T10:45:00Z', savings: -0.15, batterySavings: -0.15 },
      { interval: '2026-06-01T10:45:00Z/2026-06-01T11:00:00Z', savings: 0, batterySavings: 0 },
    ]);
    expect(r.skipped).toEqual({ noData: 0, noPrice: 0, batteryNotCounted: 1 });
    const hourly = savings(f, '2026-06-01T10:00:00Z/PT1H', 'PT1H');
    expect(hourly.entries).toEqual([
      { interval: '2026-06-01T10:00:00Z/2026-06-01T11:00:00Z', savings: -0.037, batterySavings: -0.11 },
    ]);
  });

  it('a caller that may not see the battery gets the answer of a site without it', () => {
    const f = batterySite();
    hour(f);
    const r = siteSavings(f.db, f.site, {
      range: parseInterval('2026-06-01T10:00:00Z/PT1H'),
      resolution: 'PT1H',
      now: LATER,
      sees: (id) => id !== BATTERY,
    });
    expect(r.entries).toEqual([{ interval: '2026-06-01T10:00:00Z/2026-06-01T11:00:00Z', savings: -0.037 }]);
    expect(r.skipped).toEqual({ noData: 0, noPrice: 0 });
  });
});
