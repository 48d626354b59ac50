import type { SiteConfig } from '../../src/config/types.js';
import { parseConfig } from '../../src/profiles/site-config.js';
import { Site } from '../../src/site/site.js';
import { insertBucket } from '../../src/store/buckets.js';
import { type Database, openDatabase } from '../../src/store/db.js';
import { streamKey } from '../../src/store/streams.js';
import { bucketRow } from '../support/bucket-row.js';

/** A site.yaml with an inverter, a grid meter and (optionally) a house meter, plus `extra` lines at the root. */
export function siteYaml(
  extra: readonly string[] = [],
  opts: { houseMeter?: boolean; timezone?: string; currency?: string } = {},
): string {
  return [
    'site:',
    '  id: home',
    '  name: Home',
    `  timezone: ${opts.timezone ?? 'Europe/Berlin'}`,
    `  currency: ${opts.currency ?? 'EUR'}`,
    '  location: { latitude: 52.5, longitude: 13.4 }',
    'devices:',
    '  - { id: inv, role: inverter, profile: sunspec, connection: { type: tcp, host: 127.0.0.1, unitId: 1 } }',
    '  - { id: gm, role: grid-meter, profile: sunspec, connection: { type: tcp, host: 127.0.0.1, unitId: 2 } }',
    ...(opts.houseMeter === false
      ? []
      : [
          '  - { id: hm, role: consumption-meter, profile: sunspec, connection: { type: tcp, host: 127.0.0.1, unitId: 3 } }',
        ]),
    ...extra,
    '',
  ].join('\n');
}

export function siteConfig(...args: Parameters<typeof siteYaml>): SiteConfig {
  const r = parseConfig(siteYaml(...args));
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

export const FLAT = ['tariff:', '  type: flat', '  importPrice: 0.30', '  exportPrice: 0.08'];

export const GRID = 'gm__GRID_METER_DERIVED';
export const HOUSE = 'hm';
export const DERIVED_HOUSE = 'home__CONSUMPTION_METER_DERIVED';

export interface Fixture {
  db: Database;
  site: Site;
  /** a 15-minute bucket of one stream with its mean power */
  put(streamId: string, startIso: string, powerW: number): void;
  /** house and grid buckets at once */
  both(startIso: string, houseW: number, gridW: number): void;
}

export function fixture(config: SiteConfig, db: Database = openDatabase(':memory:')): Fixture {
  const site = new Site(config);
  const put = (streamId: string, startIso: string, powerW: number) =>
    insertBucket(
      db,
      bucketRow({ stream: streamKey(db, streamId), startS: Date.parse(startIso) / 1000, power_W: powerW }),
    );
  const house = site.byRole('consumption-meter').length > 0 ? HOUSE : DERIVED_HOUSE;
  return {
    db,
    site,
    put,
    both(startIso, houseW, gridW) {
      put(house, startIso, houseW);
      put(GRID, startIso, gridW);
    },
  };
}

export const ms = (iso: string) => Date.parse(iso);
