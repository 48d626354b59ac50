import { describe, expect, it } from 'vitest';
import { CHANNEL_TABLE, type ChannelId, type IncludeGroup } from '../../src/core/channels.js';
import { foldBuckets, insertBucket } from '../../src/store/buckets.js';
import { type Database, openDatabase } from '../../src/store/db.js';
import { streamKey } from '../../src/store/streams.js';
import { entryHead, entryShape, toEntry, valuesText } from '../../src/telemetry/entry.js';
import { formatInterval, quarterInterval } from '../../src/telemetry/interval.js';
import {
  queryTelemetry,
  TELEMETRY_RESOLUTIONS,
  type TelemetryQuery,
  telemetryJson,
} from '../../src/telemetry/query.js';
import { bucketRow } from '../support/bucket-row.js';
import { Prng } from '../support/faults-seed.js';

/**
 * The one-day answer is written from the rows (telemetryJson, entry.ts valuesText) instead of
 * JSON.stringify of entry objects; a partner must not be able to tell: every byte is the same.
 */

const ALL: ChannelId[] = CHANNEL_TABLE.map((c) => c.id);

// what a row can hold: SQLite hands out numbers, text and null; a salvaged or hand-edited file
// may put text in a number's column, or a number in state's
const ODD_VALUES: (number | string | null)[] = [
  null,
  0,
  -0,
  1,
  -72,
  1234.56,
  -0.01,
  0.1 + 0.2,
  1e21,
  -1e-7,
  5e-324,
  Number.MAX_VALUE,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  Number.NaN,
  'ok',
  '',
  '5',
  'a "quoted" \\ back\u0001slash\n',
  'é✓😀',
  '\ud800',
];

describe('valuesText', () => {
  it('is JSON.stringify of toEntry for any row, shape and soc scale', () => {
    const prng = new Prng(46);
    const rnd = () => prng.next();
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
    for (let n = 0; n < 3000; n++) {
      const channels = ALL.filter(() => rnd() < 0.6);
      const include = new Set<IncludeGroup>(
        rnd() < 0.5 ? ['default', 'energy'] : [pick(['default', 'energy'] as const)],
      );
      const shape = entryShape(channels, include, rnd() < 0.5 ? 'fraction' : 'percent');
      const first = 1 + Math.floor(rnd() * 2);
      const row: (number | string | null)[] = [900 * n];
      for (let j = 1; j < first; j++) row.push(900_000);
      for (const _ of shape.names) {
        const r = rnd();
        row.push(r < 0.25 ? pick(ODD_VALUES) : r < 0.4 ? null : Math.round((rnd() - 0.5) * 1e7) / 100);
      }
      const interval = formatInterval(row[0]! as number, (row[0] as number) + 900_000);
      const entry = toEntry('battery_pack', 'bat "1"', interval, shape, row, first);
      const text = valuesText(shape, row, first);
      const written = text === '' ? undefined : `${entryHead('battery_pack', 'bat "1"')}${interval}"${text}}`;
      expect(written).toBe(entry === undefined ? undefined : JSON.stringify(entry));
    }
  });
});

describe('quarterInterval', () => {
  it('is formatInterval of the quarter hour, on the grid, off it and across midnight, over more days than it keeps', () => {
    const t0 = Date.parse('2026-03-28T00:00:00Z') / 1000;
    for (let d = 0; d < 40; d++)
      for (const s of [0, 900, 85_500, 86_399, 450, 1, -1, -900])
        expect(quarterInterval(t0 + d * 86_400 + s)).toBe(
          formatInterval((t0 + d * 86_400 + s) * 1000, (t0 + d * 86_400 + s + 900) * 1000),
        );
    // a day let go and made again, and days before 1970 (a negative start)
    expect(quarterInterval(t0)).toBe('2026-03-28T00:00:00Z/2026-03-28T00:15:00Z');
    expect(quarterInterval(-900)).toBe('1969-12-31T23:45:00Z/1970-01-01T00:00:00Z');
  });
});

describe('telemetryJson', () => {
  const T0 = Date.parse('2026-10-20T00:00:00Z');
  const DAY = 86_400_000;
  const CHANNELS: ChannelId[] = ['power_W', 'soc', 'soh', 'energy_Wh_increment', 'energy_Wh_decrement', 'state'];

  /** four days of a stream with gaps and missing values, folded into the archive, then a day re-closed in the recent table */
  function fixture(): Database {
    const db = openDatabase(':memory:');
    const stream = streamKey(db, 'bat1');
    streamKey(db, 'empty');
    const prng = new Prng(7);
    const rnd = () => prng.next();
    const row = (startS: number, scale: number) =>
      bucketRow({
        stream,
        startS,
        coveredMs: rnd() < 0.1 ? Math.round(rnd() * 900) * 1000 : 900_000,
        power_W: rnd() < 0.1 ? null : (Math.round((rnd() - 0.4) * 500_000) / 100) * scale,
        soc: rnd() < 0.1 ? null : Math.round(rnd() * 10_000) / 100,
        soh: rnd() < 0.5 ? null : 96.85,
        energyIn: rnd() < 0.05 ? null : Math.round(rnd() * 1e7) / 100,
        energyOut: -Math.round(rnd() * 100),
        state: rnd() < 0.5 ? 'ok' : null,
      });
    for (let t = T0; t < T0 + 4 * DAY; t += 900_000) {
      if (rnd() < 0.05) continue; // a missing bucket
      insertBucket(db, row(t / 1000, 1));
    }
    foldBuckets(db, (T0 + 4 * DAY) / 1000);
    // re-closed after the fold: the recent rows win over the archive's
    for (let t = T0 + DAY + 36_000_000; t < T0 + 2 * DAY + 7_200_000; t += 900_000) insertBucket(db, row(t / 1000, -3));
    // a row with no asked channel in one include set
    insertBucket(db, bucketRow({ stream, startS: (T0 + 3 * DAY) / 1000, energyIn: 5 }));
    return db;
  }

  it('is JSON.stringify of queryTelemetry for days, parts of days, several days, every resolution and include set', () => {
    const db = fixture();
    let entries = 0;
    for (const [start, end] of [
      [T0, T0 + DAY],
      [T0 + DAY, T0 + 2 * DAY],
      [T0 + DAY + 3_600_000, T0 + 2 * DAY + 3_600_000],
      [T0 + 3 * DAY - 1, T0 + 3 * DAY + 1],
      [T0 - DAY, T0 + 5 * DAY],
      [T0 + 10 * DAY, T0 + 11 * DAY],
    ])
      for (const resolution of TELEMETRY_RESOLUTIONS)
        for (const include of [['default', 'energy'], ['default'], ['energy']] as IncludeGroup[][])
          for (const socScale of ['percent', 'fraction'] as const)
            for (const streamId of ['bat1', 'empty', 'never-stored']) {
              const q: TelemetryQuery = {
                streamId,
                deviceId: streamId,
                deviceKind: 'battery_pack',
                start: start!,
                end: end!,
                resolution,
                include: new Set(include),
                channels: CHANNELS,
                timezone: 'Europe/Berlin',
                socScale,
              };
              const objects = queryTelemetry(db, q);
              entries += objects.length;
              expect(telemetryJson(db, q)).toBe(JSON.stringify({ entries: objects }));
            }
    // the comparison covered real answers, not only empty ones
    expect(entries).toBeGreaterThan(4000);
  });
});
