import { describe, expect, it } from 'vitest';
import type { ChannelId, IncludeGroup } from '../../src/core/channels.js';
import { insertBucket } from '../../src/store/buckets.js';
import { type Database, openDatabase } from '../../src/store/db.js';
import { streamKey } from '../../src/store/streams.js';
import { AnswerParts } from '../../src/telemetry/answer-parts.js';
import { queryTelemetry, type TelemetryQuery, type TelemetryResolution } from '../../src/telemetry/query.js';
import { retentionStep } from '../../src/telemetry/retention.js';
import { bucketRow } from '../support/bucket-row.js';

const DAY = 86_400_000;
const Q = 900_000;
// 40 days across the spring DST change in Berlin
const T0 = Date.parse('2026-03-01T00:00:00Z');
const DAYS = 40;
const CHANNELS: ChannelId[] = ['power_W', 'power_DC_W', 'soc', 'energy_Wh_increment', 'energy_Wh_decrement', 'state'];

function lcg(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function fixture(streams: string[]): Database {
  const db = openDatabase(':memory:');
  const rnd = lcg(7);
  for (const id of streams) {
    const stream = streamKey(db, id);
    let energy = 100;
    for (let t = T0; t < T0 + DAYS * DAY; t += Q) {
      if (rnd() < 0.03) continue; // a missing bucket
      energy += Math.round(rnd() * 500) / 100;
      insertBucket(
        db,
        bucketRow({
          stream,
          startS: t / 1000,
          coveredMs: rnd() < 0.1 ? Math.round(rnd() * 900) * 1000 : 900_000,
          power_W: Math.round((rnd() - 0.4) * 500_000) / 100,
          power_DC_W: rnd() < 0.2 ? null : Math.round(rnd() * 300_000) / 100,
          soc: rnd() < 0.1 ? null : Math.round(rnd() * 10_000) / 100,
          energyIn: Math.round(energy * 100) / 100,
          energyOut: -Math.round(rnd() * 100),
          state: rnd() < 0.5 ? 'ok' : 'standby',
        }),
      );
    }
  }
  return db;
}

type Ask = Pick<TelemetryQuery, 'start' | 'end' | 'resolution'> &
  Partial<Pick<TelemetryQuery, 'timezone' | 'socScale' | 'streamId'>> & { include?: IncludeGroup[] };

function query(a: Ask): TelemetryQuery {
  const streamId = a.streamId ?? 'bat1';
  return {
    streamId,
    deviceId: streamId,
    deviceKind: 'battery_pack',
    start: a.start,
    end: a.end,
    resolution: a.resolution,
    include: new Set(a.include ?? ['default', 'energy']),
    channels: CHANNELS,
    timezone: a.timezone ?? 'Europe/Berlin',
    socScale: a.socScale ?? 'percent',
  };
}

/** the parts' answer must be the uncached answer's bytes, exactly */
function expectSameBytes(parts: AnswerParts, db: Database, a: Ask): void {
  const q = query(a);
  const pieces = [...parts.pieces(db, q)].map((p) => p.toString('utf8'));
  expect(pieces.every((p) => p.length > 0)).toBe(true);
  expect(`{"entries":[${pieces.join(',')}]}`).toBe(JSON.stringify({ entries: queryTelemetry(db, q) }));
}

const RESOLUTIONS: TelemetryResolution[] = ['PT15M', 'PT1H', 'P1D'];

describe('AnswerParts', () => {
  it('joins kept days into the bytes the uncached query gives, for any interval, resolution and shape', () => {
    const db = fixture(['bat1', 'bat2']);
    const parts = new AnswerParts();
    const rnd = lcg(42);
    for (let n = 0; n < 90; n++) {
      const start = T0 - DAY + Math.floor(rnd() * (DAYS + 1) * 96) * Q + (rnd() < 0.3 ? 7 * 60_000 : 0);
      const end = start + Math.ceil(rnd() * 20 * 96) * Q;
      expectSameBytes(parts, db, {
        start,
        end,
        resolution: RESOLUTIONS[n % 3]!,
        streamId: rnd() < 0.5 ? 'bat1' : 'bat2',
        include: rnd() < 0.3 ? ['default'] : rnd() < 0.5 ? ['energy'] : ['default', 'energy'],
        timezone: rnd() < 0.2 ? 'Asia/Kolkata' : 'Europe/Berlin',
        socScale: rnd() < 0.3 ? 'fraction' : 'percent',
      });
    }
    expect(parts.reused).toBeGreaterThan(0);
  });

  it('a month asked again reads only the days not kept: every closed whole day is reused', () => {
    const db = fixture(['bat1']);
    const parts = new AnswerParts();
    const a = { start: T0 + 2 * DAY, end: T0 + 32 * DAY, resolution: 'PT15M' as const };
    expectSameBytes(parts, db, a);
    expect(parts.made).toBe(30);
    // another question not asked before, one day later: 29 days kept, one made
    expectSameBytes(parts, db, { ...a, start: a.start + DAY, end: a.end + DAY });
    expect(parts.reused).toBe(29);
    expect(parts.made).toBe(31);
  });

  it('windows ending at other quarter hours cut their edge days out of kept days: nothing is read again', () => {
    const db = fixture(['bat1']);
    const parts = new AnswerParts();
    for (let w = 1; w <= 8; w++) {
      const end = T0 + 35 * DAY + w * 45 * 60_000;
      expectSameBytes(parts, db, { start: end - 30 * DAY, end, resolution: 'PT15M' });
      // the first window made its 31 days; every later one only joins and cuts them
      expect(parts.made).toBe(31);
    }
  });

  it("a day is kept only once it is final: the stream's newest day is read again with its new buckets", () => {
    const db = fixture(['bat1']);
    const parts = new AnswerParts();
    const last = T0 + (DAYS - 1) * DAY;
    const a = { start: last - DAY, end: last + DAY, resolution: 'PT1H' as const };
    expectSameBytes(parts, db, a);
    const made = parts.made;
    // asked again before the stream's next bucket: the newest day is kept too
    expectSameBytes(parts, db, { ...a, start: a.start + 3_600_000 });
    expect(parts.made).toBe(made);
    // the next bucket closes: the day before stays kept, the newest day is made again
    insertBucket(db, bucketRow({ stream: streamKey(db, 'bat1'), startS: (T0 + DAYS * DAY) / 1000, power_W: 1 }));
    expectSameBytes(parts, db, a);
    expect(parts.made).toBe(made + 1);
    expectSameBytes(parts, db, { ...a, end: last + 2 * DAY });
    expect(parts.reused).toBeGreaterThan(0);
  });

  it('a bucket written below the newest (a back-fill) voids the parts kept before it', () => {
    const db = fixture(['bat1']);
    const parts = new AnswerParts();
    for (const resolution of RESOLUTIONS) {
      const a = { start: T0, end: T0 + 10 * DAY, resolution };
      expectSameBytes(parts, db, a);
      insertBucket(
        db,
        bucketRow({ stream: streamKey(db, 'bat1'), startS: (T0 + 3 * DAY + 5 * Q) / 1000, power_W: 12345, soc: 1 }),
      );
      expectSameBytes(parts, db, a);
    }
  });

  it('the newest bucket written again (a close that rolled back, then its retry) voids the newest day', () => {
    const db = fixture(['bat1']);
    const parts = new AnswerParts();
    const key = streamKey(db, 'bat1');
    const next = T0 + DAYS * DAY;
    const a = { start: next - DAY, end: next + DAY, resolution: 'PT15M' as const };
    // the close's transaction fails after the insert: the bucket is not in the table
    expect(() =>
      db.transaction(() => {
        insertBucket(db, bucketRow({ stream: key, startS: next / 1000, power_W: 7 }));
        throw new Error('disk full');
      })(),
    ).toThrow('disk full');
    expectSameBytes(parts, db, a);
    insertBucket(db, bucketRow({ stream: key, startS: next / 1000, power_W: 7 }));
    expectSameBytes(parts, db, a);
  });

  it("retention's roll-up voids them too, and the rolled days answer as the hours say", () => {
    const db = fixture(['bat1']);
    const parts = new AnswerParts();
    const a = { start: T0, end: T0 + 20 * DAY, resolution: 'PT15M' as const };
    expectSameBytes(parts, db, a);
    while (!retentionStep(db, T0 + 10 * DAY).done);
    for (const resolution of RESOLUTIONS) expectSameBytes(parts, db, { ...a, resolution });
  });

  it("a day asked alone is answered with the day's kept bytes, not a copy of them", () => {
    const db = fixture(['bat1']);
    const parts = new AnswerParts();
    const q = query({ start: T0 + 3 * DAY, end: T0 + 4 * DAY, resolution: 'PT15M' });
    const first = parts.answer(db, q);
    expect(first.toString()).toBe(JSON.stringify({ entries: queryTelemetry(db, q) }));
    // asked again: the same bytes, the same Buffer; a month over it joins that day's part
    expect(parts.answer(db, q)).toBe(first);
    expect(parts.made).toBe(1);
    const month = { ...q, start: T0 + 2 * DAY, end: T0 + 9 * DAY };
    expect(parts.answer(db, month).toString()).toBe(JSON.stringify({ entries: queryTelemetry(db, month) }));
    // part of a day, and a stream without buckets there, are joined as before
    const cut = { ...q, start: q.start + 5 * Q, end: q.end - 7 * Q };
    expect(parts.answer(db, cut).toString()).toBe(JSON.stringify({ entries: queryTelemetry(db, cut) }));
    const none = { ...q, start: T0 - 9 * DAY, end: T0 - 8 * DAY };
    expect(parts.answer(db, none).toString()).toBe('{"entries":[]}');
  });

  it('cuts days whose text is not ASCII (a device name, a state) at the entries, in bytes', () => {
    const db = openDatabase(':memory:');
    const stream = streamKey(db, 'wärme');
    for (let t = T0; t < T0 + 3 * DAY; t += Q)
      insertBucket(
        db,
        bucketRow({ stream, startS: t / 1000, power_W: (t / Q) % 7, state: (t / Q) % 3 ? 'Störung "ü"' : 'ok' }),
      );
    const parts = new AnswerParts();
    for (let w = 0; w < 6; w++) {
      const start = T0 + w * 5 * Q + (w % 2) * 7 * 60_000;
      expectSameBytes(parts, db, { start, end: start + DAY + w * Q, resolution: 'PT15M', streamId: 'wärme' });
    }
    expect(parts.reused).toBeGreaterThan(0);
  });

  it('holds no more than its bound', () => {
    const db = fixture(['bat1']);
    const parts = new AnswerParts(100_000);
    expectSameBytes(parts, db, { start: T0, end: T0 + 30 * DAY, resolution: 'PT15M' });
    expect(parts.size.bytes).toBeLessThanOrEqual(100_000);
    expect(parts.size.parts).toBeGreaterThan(0);
  });
});
