import { describe, expect, it } from 'vitest';
import { type BucketRow, bucketRange, insertBucket, insertBuckets } from '../../src/store/buckets.js';
import { openDatabase } from '../../src/store/db.js';
import { loadEnergyStates, saveEnergyState } from '../../src/store/energy-state.js';
import { findStreamKey, listStreams, streamKey } from '../../src/store/streams.js';
import { bucketRow } from '../support/bucket-row.js';

function row(stream: number, startS: number, power_W: number | null, extra: Partial<BucketRow> = {}): BucketRow {
  return bucketRow({ stream, startS, power_W, ...extra });
}

describe('streams', () => {
  it('maps a stream id to one stable integer and finds nothing for unknown ids', () => {
    const db = openDatabase(':memory:');
    const a = streamKey(db, 'inv1__bb_agg');
    const b = streamKey(db, 'inv1__GRID_METER_DERIVED');
    expect(a).not.toBe(b);
    expect(streamKey(db, 'inv1__bb_agg')).toBe(a);
    expect(findStreamKey(db, 'inv1__bb_agg')).toBe(a);
    expect(findStreamKey(db, 'nope')).toBeUndefined();
    expect(listStreams(db).map((s) => s.streamId)).toEqual(['inv1__bb_agg', 'inv1__GRID_METER_DERIVED']);
  });
});

describe('buckets', () => {
  it('keeps one row when a bucket is written twice (the later write wins)', () => {
    const db = openDatabase(':memory:');
    const s = streamKey(db, 'm1');
    insertBucket(db, row(s, 1_800_000_000, 100));
    insertBucket(db, row(s, 1_800_000_000, 250));
    const rows = bucketRange(db, s, 0, 2_000_000_000);
    expect(rows).toHaveLength(1);
    expect(rows[0]![2]).toBe(250);
  });

  it('returns [start, end) of one stream ascending, NULL for absent channels', () => {
    const db = openDatabase(':memory:');
    const s = streamKey(db, 'm1');
    const other = streamKey(db, 'm2');
    insertBuckets(db, [
      row(s, 2700, 3, { state: 'ok' }),
      row(s, 900, 1),
      row(s, 1800, null, { soc: 55.5 }),
      row(s, 3600, 4),
      row(other, 1800, 99),
    ]);
    const rows = bucketRange(db, s, 900, 3600);
    expect(rows.map((r) => r[0])).toEqual([900, 1800, 2700]);
    expect(rows[1]).toEqual([1800, 900_000, null, null, null, 55.5, null, null, null, null]);
    expect(rows[2]![9]).toBe('ok');
  });

  it('refuses a bucket for a stream id that was never registered', () => {
    const db = openDatabase(':memory:');
    expect(() => insertBucket(db, row(42, 900, 1))).toThrow(/FOREIGN KEY/);
  });
});

describe('energy state', () => {
  it('round-trips every field and replaces the previous state of the stream', () => {
    const db = openDatabase(':memory:');
    const s = streamKey(db, 'bat');
    const state = {
      inWh: 1234.5,
      outWh: 99,
      rawIn: 4_000_000_000,
      rawOut: null,
      offsetIn: -10,
      offsetOut: 0,
      heldPowerW: -300,
      heldTs: 1_800_000_000_000,
      integratedUntil: 1_800_000_060_000,
      closedUntil: 1_800_000_900_000,
      counterTs: 1_800_000_055_000,
      budgetIn: 12.5,
      budgetOut: 0,
      peakW: 6100,
    };
    saveEnergyState(db, s, { ...state, inWh: 1 });
    saveEnergyState(db, s, state);
    const loaded = loadEnergyStates(db);
    expect(loaded.size).toBe(1);
    expect(loaded.get(s)).toEqual(state);
  });
});
