import { describe, expect, it } from 'vitest';
import type { ChannelId, IncludeGroup } from '../../src/core/channels.js';
import { type BucketRow, insertBucket } from '../../src/store/buckets.js';
import { type Database, openDatabase } from '../../src/store/db.js';
import { streamKey } from '../../src/store/streams.js';
import { queryTelemetry, type TelemetryQuery, type TelemetryResolution } from '../../src/telemetry/query.js';
import { bucketRow } from '../support/bucket-row.js';

const ms = (iso: string) => Date.parse(iso);
const STREAM = 'inv1__bb_agg';
const CHANNELS: ChannelId[] = ['power_W', 'soc', 'soh', 'energy_Wh_increment', 'energy_Wh_decrement'];

type Fixture = { at: string } & Partial<Omit<BucketRow, 'stream' | 'startS'>>;

function fixture(rows: Fixture[]): Database {
  const db = openDatabase(':memory:');
  const stream = streamKey(db, STREAM);
  for (const { at, ...r } of rows) {
    insertBucket(db, bucketRow({ stream, startS: ms(at) / 1000, ...r }));
  }
  return db;
}

function query(
  db: Database,
  interval: string,
  resolution: TelemetryResolution,
  more: Partial<Omit<TelemetryQuery, 'include'>> & { include?: IncludeGroup[] } = {},
) {
  const [s, e] = interval.split('/');
  const { include, ...rest } = more;
  return queryTelemetry(db, {
    streamId: STREAM,
    deviceId: STREAM,
    deviceKind: 'battery_pack',
    start: ms(s!),
    end: ms(e!),
    resolution,
    include: new Set(include ?? ['default', 'energy']),
    channels: CHANNELS,
    timezone: 'Europe/Berlin',
    socScale: 'percent',
    ...rest,
  });
}

const hourFixture = () =>
  fixture([
    { at: '2026-11-23T00:00:00Z', power_W: 100, soc: 50, energyIn: 10, energyOut: -1 },
    { at: '2026-11-23T00:15:00Z', power_W: 200, soc: 51 },
    { at: '2026-11-23T00:30:00Z', power_W: 300, coveredMs: 450_000, energyIn: 12, energyOut: -2 },
    // 00:45 absent
    { at: '2026-11-23T01:15:00Z', power_W: -50, soc: 49.5, energyIn: 12, energyOut: -20 },
  ]);

describe('queryTelemetry PT15M', () => {
  it('returns the stored buckets the request overlaps, with both kind fields, omitting absent channels', () => {
    // 00:20 cuts the 00:15 bucket: it is listed whole (design.md "partial periods")
    const out = query(hourFixture(), '2026-11-23T00:20:00Z/2026-11-23T01:30:00Z', 'PT15M');
    expect(out).toEqual([
      {
        deviceKind: 'battery_pack',
        kind: 'battery_pack',
        deviceId: STREAM,
        interval: '2026-11-23T00:15:00Z/2026-11-23T00:30:00Z',
        power_W: 200,
        soc: 51,
      },
      {
        deviceKind: 'battery_pack',
        kind: 'battery_pack',
        deviceId: STREAM,
        interval: '2026-11-23T00:30:00Z/2026-11-23T00:45:00Z',
        power_W: 300,
        energy_Wh_increment: 12,
        energy_Wh_decrement: -2,
      },
      {
        deviceKind: 'battery_pack',
        kind: 'battery_pack',
        deviceId: STREAM,
        interval: '2026-11-23T01:15:00Z/2026-11-23T01:30:00Z',
        power_W: -50,
        soc: 49.5,
        energy_Wh_increment: 12,
        energy_Wh_decrement: -20,
      },
    ]);
  });

  it('returns nothing for a stream that was never stored', () => {
    const out = query(hourFixture(), '2026-11-23T00:00:00Z/2026-11-24T00:00:00Z', 'PT15M', { streamId: 'inv1' });
    expect(out).toEqual([]);
  });

  it('leaves out channels the stream does not carry even when the row has them', () => {
    const db = fixture([{ at: '2026-11-23T00:00:00Z', power_W: 1, state: 'ok' }]);
    const [e] = query(db, '2026-11-23T00:00:00Z/2026-11-23T01:00:00Z', 'PT15M');
    expect(e).not.toHaveProperty('state');
  });
});

describe('queryTelemetry PT1H', () => {
  it('rolls up by hand: covered-time-weighted power, last soc, energy at period end', () => {
    const out = query(hourFixture(), '2026-11-23T00:00:00Z/2026-11-23T03:00:00Z', 'PT1H');
    expect(out.map(({ deviceKind, kind, deviceId, ...v }) => v)).toEqual([
      {
        interval: '2026-11-23T00:00:00Z/2026-11-23T01:00:00Z',
        // (100 x 900 + 200 x 900 + 300 x 450) / 2250
        power_W: 180,
        soc: 51,
        energy_Wh_increment: 12,
        energy_Wh_decrement: -2,
      },
      {
        interval: '2026-11-23T01:00:00Z/2026-11-23T02:00:00Z',
        power_W: -50,
        soc: 49.5,
        energy_Wh_increment: 12,
        energy_Wh_decrement: -20,
      },
    ]);
  });

  it('widens a request that cuts periods to whole periods: each entry is its whole period, label and values', () => {
    const out = query(hourFixture(), '2026-11-23T00:20:00Z/2026-11-23T01:10:00Z', 'PT1H');
    expect(out).toEqual(query(hourFixture(), '2026-11-23T00:00:00Z/2026-11-23T02:00:00Z', 'PT1H'));
    expect(out.map((e) => e.interval)).toEqual([
      '2026-11-23T00:00:00Z/2026-11-23T01:00:00Z',
      '2026-11-23T01:00:00Z/2026-11-23T02:00:00Z',
    ]);
    expect(out[0]).toMatchObject({ power_W: 180, soc: 51 });
  });

  it('agrees with a plain reference rollup over a day of irregular rows', () => {
    const rows: Fixture[] = [];
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const day = ms('2026-06-01T00:00:00Z');
    for (let i = 0; i < 96; i++) {
      if (rnd() < 0.2) continue;
      rows.push({
        at: new Date(day + i * 900_000).toISOString(),
        coveredMs: Math.round(rnd() * 900_000) + 1,
        power_W: rnd() < 0.1 ? null : Math.round(rnd() * 5000 - 2500),
        soc: rnd() < 0.3 ? null : Math.round(rnd() * 10000) / 100,
      });
    }
    const out = query(fixture(rows), '2026-06-01T00:00:00Z/2026-06-02T00:00:00Z', 'PT1H', { include: ['default'] });
    const expected = [];
    for (let h = 0; h < 24; h++) {
      const inHour = rows.filter((r) => Math.floor((ms(r.at) - day) / 3_600_000) === h);
      if (inHour.length === 0) continue;
      const p = inHour.filter((r) => r.power_W != null);
      const w = p.reduce((a, r) => a + r.coveredMs!, 0);
      const socs = inHour.filter((r) => r.soc != null);
      const e: Record<string, number | string> = {
        interval: `${new Date(day + h * 3_600_000).toISOString().slice(0, 19)}Z/${new Date(day + (h + 1) * 3_600_000).toISOString().slice(0, 19)}Z`,
      };
      if (w > 0) e.power_W = Math.round((p.reduce((a, r) => a + r.power_W! * r.coveredMs!, 0) / w) * 100) / 100;
      if (socs.length) e.soc = socs[socs.length - 1]!.soc!;
      expected.push(e);
    }
    expect(out.map(({ deviceKind, kind, deviceId, ...v }) => v)).toEqual(expected);
  });
});

describe('queryTelemetry P1D', () => {
  const dstFixture = () =>
    fixture([
      { at: '2026-03-28T22:45:00Z', power_W: 10 }, // local Mar 28 23:45
      { at: '2026-03-28T23:00:00Z', power_W: 100, soc: 60 }, // local Mar 29 00:00
      { at: '2026-03-29T21:45:00Z', power_W: 200, coveredMs: 450_000, soc: 61, energyIn: 500 }, // local 23:45 of the 23 h day
      { at: '2026-03-29T22:00:00Z', power_W: 300, soc: 62 }, // local Mar 30 00:00
      { at: '2026-10-25T22:45:00Z', power_W: 7 }, // local Oct 25 23:45 CET, last bucket of the 25 h day
    ]);

  it('rolls up on local midnight across the 23 h spring-forward day', () => {
    const out = query(dstFixture(), '2026-03-28T00:00:00Z/2026-03-31T00:00:00Z', 'P1D');
    expect(out.map(({ deviceKind, kind, deviceId, ...v }) => v)).toEqual([
      { interval: '2026-03-27T23:00:00Z/2026-03-28T23:00:00Z', power_W: 10 },
      {
        interval: '2026-03-28T23:00:00Z/2026-03-29T22:00:00Z',
        power_W: 133.33, // (100 x 900 + 200 x 450) / 1350
        soc: 61,
        energy_Wh_increment: 500,
      },
      { interval: '2026-03-29T22:00:00Z/2026-03-30T22:00:00Z', power_W: 300, soc: 62 },
    ]);
  });

  it('gives the fall-back day 25 h', () => {
    const out = query(dstFixture(), '2026-10-25T00:00:00Z/2026-10-26T00:00:00Z', 'P1D');
    expect(out.map((e) => e.interval)).toEqual(['2026-10-24T22:00:00Z/2026-10-25T23:00:00Z']);
  });

  it('uses the zone it is given', () => {
    const out = query(dstFixture(), '2026-03-28T00:00:00Z/2026-03-31T00:00:00Z', 'P1D', { timezone: 'UTC' });
    expect(out.map((e) => e.interval)).toEqual([
      '2026-03-28T00:00:00Z/2026-03-29T00:00:00Z',
      '2026-03-29T00:00:00Z/2026-03-30T00:00:00Z',
    ]);
  });

  it('filters by include group and leaves out periods with none of the requested channels', () => {
    const db = dstFixture();
    const energy = query(db, '2026-03-28T00:00:00Z/2026-03-31T00:00:00Z', 'P1D', { include: ['energy'] });
    expect(energy.map(({ deviceKind, kind, deviceId, ...v }) => v)).toEqual([
      { interval: '2026-03-28T23:00:00Z/2026-03-29T22:00:00Z', energy_Wh_increment: 500 },
    ]);
    const def = query(db, '2026-03-28T00:00:00Z/2026-03-31T00:00:00Z', 'P1D', { include: ['default'] });
    expect(def).toHaveLength(3);
    for (const e of def) expect(Object.keys(e)).not.toContain('energy_Wh_increment');
  });
});

describe('queryTelemetry socScale', () => {
  it('divides soc by 100 for fraction, in every resolution', () => {
    const db = hourFixture();
    const iv = '2026-11-23T00:00:00Z/2026-11-23T02:00:00Z';
    expect(query(db, iv, 'PT15M', { socScale: 'fraction' }).map((e) => e.soc)).toEqual([0.5, 0.51, undefined, 0.495]);
    expect(query(db, iv, 'PT1H', { socScale: 'fraction' }).map((e) => e.soc)).toEqual([0.51, 0.495]);
    expect(query(db, iv, 'PT1H').map((e) => e.soc)).toEqual([51, 49.5]);
  });
});
