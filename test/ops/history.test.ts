/**
 * The status page's history (src/ops/history.ts) on a site with battery blocks on no inverter and
 * no grid meter: the blocks' own counters are summed, a period's energy is its end counter less
 * the previous period's, what the site cannot measure is null, and a site without a tariff has no
 * savings rather than an error.
 */
import { describe, expect, it } from 'vitest';
import { siteHistory } from '../../src/ops/history.js';
import { Site } from '../../src/site/site.js';
import { insertBucket } from '../../src/store/buckets.js';
import { openDatabase } from '../../src/store/db.js';
import { streamKey } from '../../src/store/streams.js';
import { bucketRow } from '../support/bucket-row.js';
import { fixtureSiteConfig } from '../support/fixture-site.js';

const device = (id: string, role: string, unitId: number) => ({
  id,
  role,
  profile: 'sunspec',
  connection: { type: 'tcp', host: '127.0.0.1', port: 1502, unitId },
});
const T = Date.parse('2026-06-21T08:00:00Z');

describe('history on a site with blocks on no inverter and no grid meter', () => {
  const site = new Site(
    fixtureSiteConfig({
      id: 'blocks',
      name: 'Blocks',
      dataDir: '/tmp/unused',
      devices: [
        device('battery-1', 'battery', 2),
        device('battery-2', 'battery', 3),
        device('house', 'consumption-meter', 4),
      ],
    }),
  );
  const db = openDatabase(':memory:');
  const keys = { b1: streamKey(db, 'battery-1'), b2: streamKey(db, 'battery-2'), house: streamKey(db, 'house') };
  // four hours of quarter hours from 08:00Z: each block charges and discharges, the house draws
  for (let k = 0; k < 16; k++) {
    const startS = (T + k * 900_000) / 1000;
    insertBucket(
      db,
      bucketRow({ stream: keys.b1, startS, soc: 40, energyIn: 1000 + 100 * k, energyOut: -(500 + 50 * k) }),
    );
    insertBucket(
      db,
      bucketRow({ stream: keys.b2, startS, soc: 60, energyIn: 2000 + 200 * k, energyOut: -(800 + 25 * k) }),
    );
    insertBucket(db, bucketRow({ stream: keys.house, startS, energyIn: 5000 + 250 * k }));
  }
  const h = siteHistory(db, site, 'day', Date.parse('2026-06-21T12:10:00Z'));
  const at = (iso: string) =>
    h.intervals.indexOf(`${iso}/${new Date(Date.parse(iso) + 3_600_000).toISOString().replace('.000', '')}`);

  it('sums the blocks’ own counters, per hour from one hour’s end to the next', () => {
    expect(h.intervals).toHaveLength(24);
    expect(h.intervals[23]).toBe('2026-06-21T12:00:00Z/2026-06-21T13:00:00Z');
    const nine = at('2026-06-21T09:00:00Z');
    // four quarter hours between 08:45 and 09:45: (100 + 200) Wh each in, (50 + 25) Wh each out
    expect(h.energy.batteryIn[nine]).toBe(1.2);
    expect(h.energy.batteryOut[nine]).toBe(0.3);
    expect(h.energy.house[nine]).toBe(1);
    expect(h.soc[nine]).toBe(50);
    // the first stored hour has no counter before it: missing, not guessed
    expect(h.energy.batteryIn[at('2026-06-21T08:00:00Z')]).toBeNull();
    expect(h.soc[at('2026-06-21T08:00:00Z')]).toBe(50);
    // no bucket after 11:45 yet
    expect(h.energy.batteryIn[at('2026-06-21T12:00:00Z')]).toBeNull();
  });

  it('leaves what the site cannot measure empty: no grid meter, no PV, no tariff', () => {
    for (const s of ['import', 'export', 'pv'] as const) expect(h.energy[s].every((v) => v === null)).toBe(true);
    expect(h.savings).toBeNull();
  });

  it('counts a local day on the site’s calendar', () => {
    const week = siteHistory(db, site, 'week', Date.parse('2026-06-22T12:00:00Z'));
    expect(week.intervals).toHaveLength(7);
    expect(week.intervals[5]).toBe('2026-06-20T22:00:00Z/2026-06-21T22:00:00Z');
    // the day before has no counter: the stored day alone has no base
    expect(week.energy.batteryIn[5]).toBeNull();
  });
});
