/**
 * Telemetry stamped on the recent rows (store/uplink-telemetry.ts): a message's last row carries
 * its seq, the rows below it MEMBER; a quarter hour written by a second close (a re-close, a
 * back-fill) keeps every row with the message it went out in, or, when the row it followed was
 * written again, with the new one.
 */
import { describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/store/db.js';
import { STREAM_SPAN } from '../../src/store/recent-buckets.js';
import { streamKey } from '../../src/store/streams.js';
import {
  dropTelemetryBefore,
  MEMBER,
  stampTelemetry,
  telemetryAfter,
  telemetryStats,
} from '../../src/store/uplink-telemetry.js';

const S = 1_795_392_000;

function quarter(): { db: Database; k: Record<'a' | 'b' | 'c', number>; write: (id: 'a' | 'b' | 'c') => void } {
  const db = openDatabase(':memory:');
  const k = { a: 0, b: 0, c: 0 };
  for (const id of ['a', 'b', 'c'] as const) k[id] = S * STREAM_SPAN + streamKey(db, id);
  // a close's row written (again): INSERT OR REPLACE, as store/recent-buckets.ts insertRecent
  const write = (id: 'a' | 'b' | 'c') =>
    db
      .prepare('INSERT OR REPLACE INTO buckets_recent (k, stream, start_s, covered_ms) VALUES (?, ?, ?, 900000)')
      .run(k[id], k[id] - S * STREAM_SPAN, S);
  for (const id of ['a', 'b', 'c'] as const) write(id);
  return { db, k, write };
}
const seqsOf = (db: Database) => db.prepare('SELECT seq FROM buckets_recent ORDER BY k').pluck().all();
const messages = (db: Database) => telemetryAfter(db, 0, 10).map((m) => [m.seq, m.written, m.rows.map((r) => r[0])]);

describe('telemetry stamped on the recent rows', () => {
  it('a close: the last row carries seq and written, the ones below MEMBER; read back as one message', () => {
    const { db, k } = quarter();
    stampTelemetry(db, S, [k.c, k.a, k.b], 100, 5000);
    expect(seqsOf(db)).toEqual([MEMBER, MEMBER, 100]);
    expect(messages(db)).toEqual([[100, 5000, ['a', 'b', 'c']]]);
    expect(telemetryStats(db, 0)).toEqual({ depth: 1, oldestAt: 5000 });
    expect(telemetryAfter(db, 100, 10)).toEqual([]);
  });

  it('a second close of one stream: the earlier rows keep their message, the new row goes in its own', () => {
    const { db, k, write } = quarter();
    stampTelemetry(db, S, [k.a, k.b, k.c], 100, 5000);
    write('b');
    stampTelemetry(db, S, [k.b], 101, 6000);
    expect(messages(db)).toEqual([
      [100, 5000, ['a', 'c']],
      [101, 6000, ['b']],
    ]);
  });

  it('the row a message ended with written again: its rows go with the new message, none is left without one', () => {
    const { db, k, write } = quarter();
    stampTelemetry(db, S, [k.a, k.b, k.c], 100, 5000);
    write('c');
    stampTelemetry(db, S, [k.c], 102, 7000);
    expect(messages(db)).toEqual([[102, 7000, ['a', 'b', 'c']]]);
  });

  it('a second close that makes no message, between a MEMBER row and the row it follows: the message keeps both', () => {
    const { db, k, write } = quarter();
    stampTelemetry(db, S, [k.a, k.b, k.c], 100, 5000);
    write('b');
    stampTelemetry(db, S, [k.b], null, null);
    expect(messages(db)).toEqual([[100, 5000, ['a', 'c']]]);
  });

  it('a message dropped by age leaves its rows without a seq', () => {
    const { db, k } = quarter();
    stampTelemetry(db, S, [k.a, k.b, k.c], 100, 5000);
    expect(dropTelemetryBefore(db, 0, 5001)).toEqual([100]);
    expect(seqsOf(db)).toEqual([null, null, null]);
    expect(telemetryAfter(db, 0, 10)).toEqual([]);
  });
});
