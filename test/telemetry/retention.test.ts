import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ChannelId } from '../../src/core/channels.js';
import { ManualClock } from '../../src/core/clock.js';
import { type BucketRow, bucketRange, insertBucket } from '../../src/store/buckets.js';
import { type Database, openDatabase } from '../../src/store/db.js';
import { enqueue, remove } from '../../src/store/outbox.js';
import { hourColumns, rolledUntil } from '../../src/store/retention.js';
import { streamKey } from '../../src/store/streams.js';
import type { TelemetryEntry } from '../../src/telemetry/entry.js';
import { formatInstant } from '../../src/telemetry/interval.js';
import { queryTelemetry, type TelemetryResolution } from '../../src/telemetry/query.js';
import { Retention, type RetentionOptions, retentionCutoff, retentionStep } from '../../src/telemetry/retention.js';
import { bucketRow } from '../support/bucket-row.js';

const ms = (iso: string) => Date.parse(iso);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const CHANNELS: ChannelId[] = ['power_W', 'soc', 'energy_Wh_increment', 'energy_Wh_decrement'];
const STREAMS = ['inv1__bb_agg', 'meter1'];
// the site's "now": one year kept ends at 2025-03-10T12:00Z
const NOW = ms('2026-03-10T12:34:56Z');
const CUT = ms('2025-03-10T12:00:00Z');

/**
 * Two streams, 15-minute buckets from 4 days before the one-year cutoff to 2 days after it, with
 * gaps, a partly covered bucket and soc missing in some: what rollups must weigh and skip.
 */
function fixture(): Database {
  const db = openDatabase(':memory:');
  STREAMS.forEach((id, n) => {
    const stream = streamKey(db, id);
    let energy = 1000 * (n + 1);
    for (let t = CUT - 4 * DAY; t < CUT + 2 * DAY; t += 900_000) {
      const i = (t - CUT) / 900_000;
      if (i % 37 === 5) continue; // a missing bucket
      energy += (i & 7) + 0.25;
      const row: Partial<BucketRow> = {
        coveredMs: i % 11 === 0 ? 450_000 : 900_000,
        power_W: Math.round(1000 * Math.sin(i / 7) * 100) / 100 + n,
        soc: i % 5 === 0 ? null : 50 + (i % 40) / 2,
        energyIn: Math.round(energy * 100) / 100,
        energyOut: -(i & 3),
      };
      insertBucket(db, bucketRow({ stream, startS: t / 1000, ...row }));
    }
  });
  return db;
}

function query(db: Database, stream: string, from: number, to: number, resolution: TelemetryResolution) {
  return queryTelemetry(db, {
    streamId: stream,
    deviceId: stream,
    deviceKind: 'battery_pack',
    start: from,
    end: to,
    resolution,
    include: new Set(['default', 'energy']),
    channels: CHANNELS,
    timezone: 'Europe/Berlin',
    socScale: 'percent',
  });
}

/** equal entries, power means to a cent (a day's mean of hour means may differ in the last bit) */
function expectSame(a: TelemetryEntry[], b: TelemetryEntry[]): void {
  expect(a.map((e) => e.interval)).toEqual(b.map((e) => e.interval));
  a.forEach((e, i) => {
    const f = b[i]!;
    expect(Object.keys(e).sort()).toEqual(Object.keys(f).sort());
    for (const [k, v] of Object.entries(e)) {
      const w = (f as Record<string, unknown>)[k];
      if (typeof v === 'number') expect(Math.abs(v - (w as number))).toBeLessThanOrEqual(0.010001);
      else expect(w).toEqual(v);
    }
  });
}

/** one year kept, a silent log, no pause between steps, unless said otherwise */
const retention = (
  db: Database,
  o: Partial<RetentionOptions> & Pick<RetentionOptions, 'closedUntil' | 'uplinkTopic'>,
) => new Retention({ db, clock: new ManualClock(NOW), keepYears: 1, log: pino({ level: 'silent' }), pauseMs: 0, ...o });

const everything = (db: Database) => {
  while (!retentionStep(db, CUT).done);
};

describe('retentionCutoff', () => {
  const base = { now: NOW, keepYears: 1, closedUntil: NOW - 60_000, pendingFrom: null };
  it('is the kept years before now, on a whole hour', () => {
    expect(retentionCutoff(base)).toBe(CUT);
    expect(retentionCutoff({ ...base, keepYears: 3 })).toBe(ms('2023-03-10T12:00:00Z'));
  });
  it('never reaches a bucket still open: the newest closed end bounds it', () => {
    const closed = ms('2024-06-01T10:45:00Z');
    expect(retentionCutoff({ ...base, closedUntil: closed })).toBe(ms('2024-06-01T10:00:00Z'));
    expect(retentionCutoff({ ...base, closedUntil: Number.NEGATIVE_INFINITY })).toBe(Number.NEGATIVE_INFINITY);
  });
  it('never reaches a bucket the uplink has not sent', () => {
    const pending = ms('2025-01-02T03:15:00Z');
    expect(retentionCutoff({ ...base, pendingFrom: pending })).toBe(ms('2025-01-02T03:00:00Z'));
  });
});

describe('retention pass', () => {
  it('rolls buckets before the cutoff into hours: PT1H and P1D answer as before, PT15M ends at the cutoff', () => {
    const db = fixture();
    const from = CUT - 4 * DAY;
    const to = CUT + 2 * DAY;
    const before = STREAMS.map((s) => ({
      pt15: query(db, s, from, to, 'PT15M'),
      h: query(db, s, from, to, 'PT1H'),
      d: query(db, s, from, to, 'P1D'),
    }));
    everything(db);
    expect(rolledUntil(db)).toBe(CUT / 1000);
    STREAMS.forEach((s, n) => {
      const key = streamKey(db, s);
      // no PT15M row before the cutoff is left, every one after it is
      const left = bucketRange(db, key, from / 1000, to / 1000);
      expect(left[0]![0] * 1000).toBe(CUT);
      expect(left.length).toBe(before[n]!.pt15.filter((e) => ms(e.interval.split('/')[0]!) >= CUT).length);
      expect(hourColumns(db, key, 0, CUT / 1000, []).length).toBe(4 * 24);
      expect(query(db, s, from, to, 'PT15M')).toEqual(before[n]!.pt15.slice(before[n]!.pt15.length - left.length));
      expectSame(query(db, s, from, to, 'PT1H'), before[n]!.h);
      expectSame(query(db, s, from, to, 'P1D'), before[n]!.d);
    });
  });

  it('a bucket written late into a rolled hour joins it rather than replacing it', () => {
    const db = fixture();
    const key = streamKey(db, STREAMS[0]!);
    const hour = CUT - 10 * HOUR;
    const asBefore = query(db, STREAMS[0]!, hour, hour + HOUR, 'PT1H');
    const late = bucketRange(db, key, (hour + 15 * 60_000) / 1000, (hour + 30 * 60_000) / 1000)[0]!;
    everything(db);
    // the hour's 00:15 bucket again, as a back-fill would write it, then another pass
    insertBucket(db, bucketRow({ stream: key, startS: late[0], coveredMs: 900_000, power_W: 5000 }));
    everything(db);
    const [after] = query(db, STREAMS[0]!, hour, hour + HOUR, 'PT1H');
    expect(after!.energy_Wh_increment).toBe(asBefore[0]!.energy_Wh_increment);
    expect(after!.power_W).not.toBe(asBefore[0]!.power_W);
    expect(bucketRange(db, key, hour / 1000, (hour + HOUR) / 1000)).toEqual([]);
  });

  it('keeps everything from the oldest bucket a waiting uplink message carries, until it is sent', () => {
    const db = fixture();
    const pending = CUT - 2 * DAY + 15 * 60_000;
    const [seq] = enqueue(
      db,
      [{ topic: 'telemetry', body: `{"v":2,"time":"${formatInstant(pending)}","siteId":"s"}`, retain: false }],
      NOW,
    );
    const r = retention(db, { closedUntil: () => NOW - 60_000, uplinkTopic: 'telemetry' });
    const key = streamKey(db, STREAMS[1]!);
    return r
      .pass()
      .then(() => {
        const left = bucketRange(db, key, 0, CUT / 1000);
        // the whole hour the message's bucket is in stays
        expect(left[0]![0] * 1000).toBe(pending - 15 * 60_000);
        remove(db, [seq!]);
        return r.pass();
      })
      .then(() => {
        expect(bucketRange(db, key, 0, CUT / 1000)).toEqual([]);
      });
  });

  it('never touches what is at or after the newest closed end', async () => {
    const db = fixture();
    const closed = CUT - 3 * DAY + 45 * 60_000;
    const r = retention(db, { closedUntil: () => closed, uplinkTopic: 'telemetry' });
    await r.pass();
    const key = streamKey(db, STREAMS[0]!);
    expect(bucketRange(db, key, 0, CUT / 1000)[0]![0] * 1000).toBe(CUT - 3 * DAY);
  });

  it('works in bounded steps (one stream, batchDays at most) and lets other work run between them', async () => {
    const db = fixture();
    const first = retentionStep(db, CUT, 1);
    expect(first.done).toBe(false);
    expect(first.deleted).toBeGreaterThan(0);
    expect(first.deleted).toBeLessThanOrEqual(96);
    const r = retention(db, { closedUntil: () => NOW, uplinkTopic: null, batchDays: 1 });
    const passing = r.pass();
    // a poll's write lands while the pass is still going
    let wroteDuring = false;
    const key = streamKey(db, STREAMS[0]!);
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        insertBucket(db, bucketRow({ stream: key, startS: (CUT + 2 * DAY) / 1000, power_W: 1 }));
        wroteDuring = bucketRange(db, streamKey(db, STREAMS[1]!), 0, CUT / 1000).length > 0;
        resolve();
      }),
    );
    await passing;
    expect(wroteDuring).toBe(true);
    expect(r.deleted).toBeGreaterThan(2 * 96);
    for (const s of STREAMS) expect(bucketRange(db, streamKey(db, s), 0, CUT / 1000)).toEqual([]);
  });

  it('runs first after firstAfterMs, then once a day, and stops between steps', async () => {
    const db = fixture();
    const clock = new ManualClock(NOW);
    const r = retention(db, { clock, closedUntil: () => NOW, uplinkTopic: null, firstAfterMs: 60_000 });
    r.start();
    clock.advance(59_000);
    expect(r.deleted).toBe(0);
    clock.advance(1_000);
    await r.pass();
    expect(r.deleted).toBeGreaterThan(0);
    await r.stop();
  });
});
