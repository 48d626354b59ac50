/**
 * The buckets' two tables (src/store/recent-buckets.ts): closes go to the time-ordered recent
 * table, a day of them is folded into the (stream, start_s) archive, and every read answers the
 * same whichever table a bucket is in, on the layout before too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ALL_COLUMNS,
  type BucketRow,
  bucketRange,
  bucketsFinal,
  foldBuckets,
  insertBucket,
  insertBuckets,
} from '../../src/store/buckets.js';
import { type Database, openDatabase, openReadOnly, schemaVersion } from '../../src/store/db.js';
import { sqliteDriver } from '../../src/store/driver.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { FOLD_SPAN_S, foldBefore } from '../../src/store/recent-buckets.js';
import { oldestBucketBefore, replaceWithHours } from '../../src/store/retention.js';
import { streamKey } from '../../src/store/streams.js';
import { bucketRow } from '../support/bucket-row.js';

const Q = 900;
const T0 = 1_800_000_000 - (1_800_000_000 % 86_400);
const row = (stream: number, startS: number, power_W: number): BucketRow =>
  bucketRow({ stream, startS, power_W, energyIn: startS / 100, energyOut: -stream });
const count = (db: Database, table: string) => db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;

/** `n` closes of `streams` streams from T0, each in its own transaction, folded as the bucketer does */
function closes(db: Database, keys: number[], from: number, n: number): void {
  for (let i = from; i < from + n; i++) {
    insertBuckets(
      db,
      keys.map((k, j) => row(k, T0 + i * Q, i * 10 + j)),
    );
    foldBuckets(db, T0 + (i + 1) * Q);
  }
}

describe('buckets in two tables', () => {
  it('writes closes in time order and folds them into the archive once they span a day; reads are the same throughout', () => {
    const db = openDatabase(':memory:');
    const keys = [streamKey(db, 'a'), streamKey(db, 'b'), streamKey(db, 'c')];
    closes(db, keys, 0, 95);
    // 95 closes span less than a day: nothing folded yet
    expect(count(db, 'buckets')).toBe(0);
    expect(count(db, 'buckets_recent')).toBe(95 * 3);
    const before = keys.map((k) => bucketRange(db, k, T0, T0 + 200 * Q));
    closes(db, keys, 95, 1);
    // the close that made a day folded everything closed
    expect(count(db, 'buckets')).toBe(96 * 3);
    expect(count(db, 'buckets_recent')).toBe(0);
    keys.forEach((k, i) => expect(bucketRange(db, k, T0, T0 + 95 * Q)).toEqual(before[i]));
    // a close that wrote nothing (no stream had a bucket) while the recent table is empty
    expect(foldBuckets(db, T0 + 96 * Q)).toBe(0);
    closes(db, keys, 96, 10);
    for (const k of keys) {
      const rows = bucketRange(db, k, T0, T0 + 200 * Q);
      expect(rows.map((r) => r[0])).toEqual(Array.from({ length: 106 }, (_, i) => T0 + i * Q));
      // a range across both tables, and one inside each
      expect(bucketRange(db, k, T0 + 90 * Q, T0 + 100 * Q).map((r) => r[0])).toEqual(
        Array.from({ length: 10 }, (_, i) => T0 + (90 + i) * Q),
      );
      expect(bucketRange(db, k, T0 + 100 * Q, T0 + 102 * Q)).toHaveLength(2);
    }
    expect(bucketsFinal(db, keys[0]!).finalBeforeMs).toBe((T0 + 105 * Q) * 1000);
    // a day more: folded again
    closes(db, keys, 106, 96);
    expect(count(db, 'buckets_recent')).toBeLessThan(96 * 3);
    expect(count(db, 'buckets')).toBeGreaterThan(106 * 3);
    expect(FOLD_SPAN_S).toBe(96 * Q);
  });

  it('a bucket written again after its day was folded is read from the recent table, and replaces the archived one at the next fold', () => {
    const db = openDatabase(':memory:');
    const k = streamKey(db, 'a');
    closes(db, [k], 0, 100);
    expect(count(db, 'buckets')).toBe(96);
    // a re-close after a restart: the archived bucket 10 again, with another value
    insertBucket(db, row(k, T0 + 10 * Q, 4242));
    const read = () => bucketRange(db, k, T0, T0 + 200 * Q);
    expect(read()).toHaveLength(100);
    expect(read()[10]![2]).toBe(4242);
    expect(db.prepare('SELECT COUNT(*) FROM buckets_all').pluck().get()).toBe(100);
    expect(
      db
        .prepare('SELECT power_W FROM buckets_all WHERE start_s = ?')
        .pluck()
        .get(T0 + 10 * Q),
    ).toBe(4242);
    // a fold cut between its two statements leaves rows in both tables: still one answer each
    db.prepare(
      `INSERT OR REPLACE INTO buckets (stream, start_s, ${ALL_COLUMNS.join(', ')}) SELECT stream, start_s, ${ALL_COLUMNS.join(', ')} FROM buckets_recent`,
    ).run();
    expect(read()).toHaveLength(100);
    expect(read()[10]![2]).toBe(4242);
    foldBefore(db, T0 + 200 * Q);
    expect(count(db, 'buckets_recent')).toBe(0);
    expect(read()).toHaveLength(100);
    expect(read()[10]![2]).toBe(4242);
  });

  it('retention finds and deletes buckets in either table', () => {
    const db = openDatabase(':memory:');
    const k = streamKey(db, 'a');
    closes(db, [k], 0, 100);
    // two hours in the archive (folded) and one written again since, in the recent table
    insertBucket(db, row(k, T0 + 4 * Q, 7));
    expect(oldestBucketBefore(db, k, T0 + 8 * Q)).toBe(T0);
    const hours = [0, 1].map((h) => bucketRow({ stream: k, startS: T0 + h * 3600, power_W: 1, coveredMs: 3_600_000 }));
    expect(replaceWithHours(db, k, T0, T0 + 7200, hours)).toBe(9);
    expect(bucketRange(db, k, T0, T0 + 8 * Q)).toEqual([]);
    expect(oldestBucketBefore(db, k, T0 + 8 * Q)).toBeUndefined();
    expect(oldestBucketBefore(db, k, T0 + 9 * Q)).toBe(T0 + 8 * Q);
    // a bucket only in the recent table
    insertBucket(db, row(k, T0 - Q, 3));
    expect(oldestBucketBefore(db, k, T0)).toBe(T0 - Q);
  });

  it('reads, writes and migrates a database of the layout before (schema 16, one table), every bucket identical', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sitegw-recent-'));
    try {
      const file = join(dir, 'sitegw.db');
      // the layout before: what schema 16 made (17 added the recent table, 18 the energy floors)
      const old = openDatabase(file);
      old.exec('DROP VIEW buckets_all; DROP TABLE buckets_recent; DROP TABLE energy_floor; DROP TABLE uplink_sent');
      old.pragma('user_version = 16');
      old.close();
      const before = openReadOnly(file);
      expect(schemaVersion(before)).toBe(16);
      before.close();
      // a connection on that layout (a read-only start serves one without migrating) reads and writes the one table
      const v16 = new (sqliteDriver())(file);
      const k = streamKey(v16, 'a');
      closes(v16, [k], 0, 120);
      expect(count(v16, 'buckets')).toBe(120);
      const rows = bucketRange(v16, k, T0, T0 + 200 * Q);
      expect(rows.map((r) => r[0])).toEqual(Array.from({ length: 120 }, (_, i) => T0 + i * Q));
      v16.close();
      const db = openDatabase(file);
      expect(schemaVersion(db)).toBe(MIGRATIONS.length);
      // the step moved nothing, and the next closes go to the recent table
      expect(bucketRange(db, k, T0, T0 + 200 * Q)).toEqual(rows);
      closes(db, [k], 120, 4);
      expect(count(db, 'buckets')).toBe(120);
      expect(count(db, 'buckets_recent')).toBe(4);
      expect(bucketRange(db, k, T0, T0 + 200 * Q)).toHaveLength(124);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
