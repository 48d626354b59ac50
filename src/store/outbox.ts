import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { Database, Statement } from 'better-sqlite3';
import { writeTx } from './db.js';
import { perConnection } from './per-connection.js';
import { dropTelemetryBefore } from './uplink-telemetry.js';

/**
 * The uplink's outbox: messages written in the same transaction as the data they carry (a closed
 * bucket, a grid event), deleted only once the broker acknowledged them. `seq` is the message's
 * per-site sequence number; the body is the payload without it (see withSeq).
 */
export interface OutboxMessage {
  /** topic below the uplink's prefix, e.g. `telemetry` */
  topic: string;
  /** a JSON object text */
  body: string;
  retain: boolean;
}

export interface OutboxRow extends OutboxMessage {
  seq: number;
  createdAt: number;
}

export interface OutboxStats {
  depth: number;
  /** the bodies as stored: a long one deflated (DEFLATE_OVER) */
  bytes: number;
  /** created_at of the oldest undelivered message, ms (daemon clock); null when empty */
  oldestAt: number | null;
}

export interface OutboxDrops {
  byAge: number;
  bySize: number;
  lastAt: number | null;
}

/**
 * A body longer than this is kept deflated, as a BLOB: on 4 KiB pages SQLite keeps up to about
 * 4,000 bytes of a row in its leaf and puts the rest on overflow pages, each written at the insert
 * and again when the freed page is taken by the next. A 200-device site's telemetry message (272
 * entries, 117 kB of JSON) took some 29 pages at every close, 8.7 MB a day
 * (bench/README.md "SQLite writes a day"); deflated it is a few. A home site's (3 kB) fits its
 * leaf either way and stays text, as do older rows: a row is read by its type.
 */
export const DEFLATE_OVER = 3500;

/** What a body is stored as. */
const stored = (body: string): string | Buffer =>
  body.length > DEFLATE_OVER ? deflateRawSync(Buffer.from(body, 'utf8')) : body;

/** The body's text, from what a row holds (text, or a deflated BLOB). */
export function bodyText(v: string | Buffer): string {
  return typeof v === 'string' ? v : inflateRawSync(v).toString('utf8');
}

type RawRow = [number, string, string | Buffer, number, number];
interface Stmts {
  insert: Statement<[string, string | Buffer, number, number], { seq: number }>;
  after: Statement<[number, number], RawRow>;
  del: Statement<[number]>;
  stats: Statement<[], [number, number | null, number | null]>;
}
const stmts = perConnection(
  (db): Stmts => ({
    insert: db.prepare<[string, string | Buffer, number, number], { seq: number }>(
      'INSERT INTO uplink_outbox (topic, body, retain, created_at) VALUES (?, ?, ?, ?) RETURNING seq',
    ),
    after: db
      .prepare<[number, number], RawRow>(
        'SELECT seq, topic, body, retain, created_at FROM uplink_outbox WHERE seq > ? ORDER BY seq LIMIT ?',
      )
      .raw(),
    del: db.prepare<[number]>('DELETE FROM uplink_outbox WHERE seq = ?'),
    stats: db
      .prepare<[], [number, number | null, number | null]>(
        'SELECT COUNT(*), SUM(length(CAST(body AS BLOB))), MIN(created_at) FROM uplink_outbox',
      )
      .raw(),
  }),
);

/** Appends messages (joining the caller's transaction when there is one); returns their seqs. */
export function enqueue(db: Database, msgs: readonly OutboxMessage[], createdAt: number): number[] {
  const s = stmts(db).insert;
  return writeTx(db, () => msgs.map((m) => s.get(m.topic, stored(m.body), m.retain ? 1 : 0, createdAt)!.seq));
}

/** The next `limit` messages after `afterSeq`, oldest first. */
export function readAfter(db: Database, afterSeq: number, limit: number): OutboxRow[] {
  return stmts(db)
    .after.all(afterSeq, limit)
    .map(([seq, topic, body, retain, createdAt]) => ({
      seq,
      topic,
      body: bodyText(body),
      retain: retain === 1,
      createdAt,
    }));
}

/** Removes delivered messages, in one transaction. */
export function remove(db: Database, seqs: readonly number[]): void {
  const s = stmts(db).del;
  writeTx(db, () => {
    for (const q of seqs) s.run(q);
  });
}

export function outboxStats(db: Database): OutboxStats {
  const [depth, bytes, oldestAt] = stmts(db).stats.get()!;
  return { depth, bytes: bytes ?? 0, oldestAt };
}

export function outboxDrops(db: Database): OutboxDrops {
  const r = db.prepare('SELECT by_age, by_size, last_at FROM uplink_drops WHERE id = 1').raw().get() as
    | [number, number, number | null]
    | undefined;
  return r ? { byAge: r[0], bySize: r[1], lastAt: r[2] } : { byAge: 0, bySize: 0, lastAt: null };
}

/**
 * Applies the outbox bounds: drops messages created before `olderThan`, then the oldest until
 * the bodies fit in `maxBytes`. Drops are counted in the same transaction. Returns what went.
 * With `telemetryAfter` (the uplink's ack position), telemetry pending in the buckets
 * (store/uplink-telemetry.ts) is bound by age too, and counted with the outbox's; it takes no
 * room of its own (its rows are the buckets), so the size bound is the outbox's alone.
 */
export function trim(
  db: Database,
  olderThan: number,
  maxBytes: number,
  now: number,
  telemetryAfter?: number,
): { byAge: number; bySize: number; telemetry: number[] } {
  return writeTx(db, () => {
    const telemetry = telemetryAfter === undefined ? [] : dropTelemetryBefore(db, telemetryAfter, olderThan);
    const byAge =
      db.prepare('DELETE FROM uplink_outbox WHERE created_at < ?').run(olderThan).changes + telemetry.length;
    let bySize = 0;
    const { bytes } = outboxStats(db);
    if (bytes > maxBytes) {
      // the newest messages whose running size fits stay; everything older goes
      const keepFrom = db
        .prepare(
          `SELECT seq FROM (SELECT seq, SUM(length(CAST(body AS BLOB))) OVER (ORDER BY seq DESC) AS running FROM uplink_outbox)
            WHERE running <= ? ORDER BY seq ASC LIMIT 1`,
        )
        .pluck()
        .get(maxBytes) as number | undefined;
      bySize =
        keepFrom === undefined
          ? db.prepare('DELETE FROM uplink_outbox').run().changes
          : db.prepare('DELETE FROM uplink_outbox WHERE seq < ?').run(keepFrom).changes;
    }
    countDrops(db, byAge, bySize, now);
    return { byAge, bySize, telemetry };
  });
}

/** Counts dropped messages (the caller's transaction): the outbox's, and telemetry's in the buckets. */
export function countDrops(db: Database, byAge: number, bySize: number, now: number): void {
  if (byAge + bySize === 0) return;
  db.prepare('UPDATE uplink_drops SET by_age = by_age + ?, by_size = by_size + ?, last_at = ? WHERE id = 1').run(
    byAge,
    bySize,
    now,
  );
}

/** The payload on the wire: the body with `seq` as its first field. */
export function withSeq(seq: number, body: string): string {
  return `{"seq":${seq},${body.slice(1)}`;
}
