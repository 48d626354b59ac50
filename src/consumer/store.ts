import { PostgresDb } from './postgres-db.js';
import type { SqlDb } from './sql.js';
import { SqliteDb } from './sqlite-db.js';

/**
 * The reference consumer's own database (cloud side, not the gateway's: its own file and schema,
 * which is why it lives beside the consumer rather than in src/store/ with the gateway's
 * migrations): a SQLite file, or PostgreSQL when the target is a `postgres://` URL (sql.ts).
 * Several consumer processes may share one database: every message is one transaction that
 * first locks its site's row, so the per-site seq ledger stays exact whichever instance a
 * message reached.
 *
 * Per site it keeps (docs/mqtt-contract.md "What a consumer keeps per site"):
 * - `seq_ranges`: the seqs received, as runs [lo, hi] with the `time` of both ends; normally one
 *   row per site. A seq inside a run is a duplicate; the space between two runs is a hole.
 * - `holes`: each hole found, when, the resync asked for it and when it was filled.
 * - `telemetry`: entries upserted by deviceId + interval start; a higher seq wins, so the order
 *   in which redeliveries and resyncs arrive does not matter.
 * - `grid_events`: each event once by deviceId + timestamp, with the seq of the first message
 *   that brought it (live or resync).
 */
export interface TelemetryRow {
  deviceId: string;
  start: number;
  interval: string;
  deviceKind: string;
  entry: string;
}

export type Incoming =
  | { kind: 'telemetry'; entries: TelemetryRow[]; resync: string | null }
  | { kind: 'grid-event'; deviceId: string; timestamp: string; state: string }
  | { kind: 'state'; key: string; body: string };

export interface Hole {
  id: number;
  siteId: string;
  prefix: string;
  fromSeq: number;
  toSeq: number;
  interval: string;
  detectedAt: number;
  requestId: string | null;
  requestedAt: number | null;
  attempts: number;
  firstSeq: number | null;
  lastSeq: number | null;
  status: 'open' | 'requested' | 'accepted' | 'filled' | 'arrived';
  closedAt: number | null;
  /** seqs the fill entered into the runs (the part of the hole still missing then); null until filled */
  filledSeqs: number | null;
}

export interface Gap {
  siteId: string;
  fromSeq: number;
  toSeq: number;
  /** `time` of the messages on either side, ms */
  beforeTime: number;
  afterTime: number;
}

/** topology and availability: the latest by seq */
const STATE_UPSERT = `INSERT INTO site_state (site_id, key, seq, body) VALUES (?, ?, ?, ?)
  ON CONFLICT (site_id, key) DO UPDATE SET seq = excluded.seq, body = excluded.body WHERE excluded.seq > site_state.seq`;

/** A `postgres://` or `postgresql://` URL; anything else is a SQLite file path. */
export const isPostgresUrl = (target: string) => /^postgres(ql)?:\/\//i.test(target);

export class ConsumerStore {
  private constructor(readonly db: SqlDb) {}

  static async open(target: string): Promise<ConsumerStore> {
    return new ConsumerStore(isPostgresUrl(target) ? await PostgresDb.open(target) : new SqliteDb(target));
  }

  close(): Promise<void> {
    return this.db.close();
  }

  /**
   * Takes the site's row lock (PostgreSQL; SQLite's IMMEDIATE transaction holds the file's)
   * before anything of the site's ledger is read.
   */
  private lockSite(db: SqlDb, siteId: string): Promise<number> {
    return db.run('UPDATE sites SET messages = messages WHERE site_id = ?', [siteId]);
  }

  /**
   * One message with a seq: false when that seq was already processed (nothing written).
   * Otherwise records the seq and stores what the message carries, in one transaction.
   */
  accept(siteId: string, prefix: string, seq: number, time: number, msg: Incoming, now: number): Promise<boolean> {
    return this.db.tx(async (db) => {
      // the upsert takes the site's row lock first
      await db.run(
        `INSERT INTO sites (site_id, prefix, first_seen_at, last_message_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (site_id) DO UPDATE SET prefix = excluded.prefix, last_message_at = excluded.last_message_at`,
        [siteId, prefix, now, now],
      );
      if (!(await this.mark(db, siteId, seq, seq, time, time))) {
        await db.run('UPDATE sites SET duplicates = duplicates + 1 WHERE site_id = ?', [siteId]);
        return false;
      }
      await db.run('UPDATE sites SET messages = messages + 1 WHERE site_id = ?', [siteId]);
      if (msg.kind === 'telemetry') {
        const up = `INSERT INTO telemetry (site_id, device_id, start, interval, device_kind, seq, resync, entry, received_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (site_id, device_id, start) DO UPDATE SET seq = excluded.seq, resync = excluded.resync,
             entry = excluded.entry, received_at = excluded.received_at, interval = excluded.interval,
             device_kind = excluded.device_kind, writes = telemetry.writes + 1
           WHERE excluded.seq > telemetry.seq`;
        for (const e of msg.entries)
          await db.run(up, [siteId, e.deviceId, e.start, e.interval, e.deviceKind, seq, msg.resync, e.entry, now]);
      } else if (msg.kind === 'grid-event') {
        // once per event: a resync's copy of one already here (sql.ts grid_events_once) changes nothing
        const once = `INSERT INTO grid_events (site_id, seq, device_id, timestamp, state) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (site_id, device_id, timestamp) DO NOTHING`;
        await db.run(once, [siteId, seq, msg.deviceId, msg.timestamp, msg.state]);
      } else {
        await db.run(STATE_UPSERT, [siteId, msg.key, seq, msg.body]);
      }
      return true;
    });
  }

  /**
   * Adds [lo, hi] to the site's runs, joining neighbours; false when any of it was there already
   * (only whole new messages, lo = hi, or a hole's seqs, which are never received, come here).
   */
  private async mark(
    db: SqlDb,
    siteId: string,
    lo: number,
    hi: number,
    loTime: number,
    hiTime: number,
  ): Promise<boolean> {
    const inside = await db.all('SELECT 1 FROM seq_ranges WHERE site_id = ? AND lo <= ? AND hi >= ? LIMIT 1', [
      siteId,
      hi,
      lo,
    ]);
    if (inside.length > 0) return false;
    const [before] = await db.all<{ lo: number; lo_time: number }>(
      'SELECT lo, lo_time FROM seq_ranges WHERE site_id = ? AND hi = ?',
      [siteId, lo - 1],
    );
    const [after] = await db.all<{ hi: number; hi_time: number }>(
      'SELECT hi, hi_time FROM seq_ranges WHERE site_id = ? AND lo = ?',
      [siteId, hi + 1],
    );
    if (before) await db.run('DELETE FROM seq_ranges WHERE site_id = ? AND lo = ?', [siteId, before.lo]);
    if (after) await db.run('DELETE FROM seq_ranges WHERE site_id = ? AND lo = ?', [siteId, hi + 1]);
    await db.run('INSERT INTO seq_ranges (site_id, lo, hi, lo_time, hi_time) VALUES (?, ?, ?, ?, ?)', [
      siteId,
      before?.lo ?? lo,
      after?.hi ?? hi,
      before?.lo_time ?? loTime,
      after?.hi_time ?? hiTime,
    ]);
    return true;
  }

  /** Whether every seq of [lo, hi] was received. */
  async covered(siteId: string, lo: number, hi: number): Promise<boolean> {
    return (
      (await this.db.all('SELECT 1 FROM seq_ranges WHERE site_id = ? AND lo <= ? AND hi >= ?', [siteId, lo, hi]))
        .length > 0
    );
  }

  /** The spaces between received runs, per site (of one site when siteId is given). */
  async gaps(siteId?: string, db: SqlDb = this.db): Promise<Gap[]> {
    const cols = 'SELECT site_id, lo, hi, lo_time, hi_time FROM seq_ranges';
    type Row = { site_id: string; lo: number; hi: number; lo_time: number; hi_time: number };
    const rows =
      siteId === undefined
        ? await db.all<Row>(`${cols} ORDER BY site_id, lo`)
        : await db.all<Row>(`${cols} WHERE site_id = ? ORDER BY lo`, [siteId]);
    const out: Gap[] = [];
    rows.forEach((r, i) => {
      const prev = rows[i - 1];
      if (prev && r.site_id === prev.site_id) {
        out.push({
          siteId: r.site_id,
          fromSeq: prev.hi + 1,
          toSeq: r.lo - 1,
          beforeTime: prev.hi_time,
          afterTime: r.lo_time,
        });
      }
    });
    // the tail: seqs a status said were written (lastSeq) above the site's highest run
    type Tail = { site_id: string; hi: number; hi_time: number; last_seq: number; last_seq_time: number };
    const tails = await db.all<Tail>(
      `SELECT r.site_id, r.hi, r.hi_time, s.last_seq, s.last_seq_time FROM seq_ranges r JOIN sites s USING (site_id)
       WHERE s.last_seq > r.hi AND r.hi = (SELECT MAX(hi) FROM seq_ranges m WHERE m.site_id = r.site_id)
       ${siteId === undefined ? '' : 'AND r.site_id = ?'}`,
      siteId === undefined ? [] : [siteId],
    );
    for (const t of tails)
      out.push({
        siteId: t.site_id,
        fromSeq: t.hi + 1,
        toSeq: Number(t.last_seq),
        beforeTime: t.hi_time,
        afterTime: Number(t.last_seq_time),
      });
    return out;
  }

  /**
   * A status message (docs/mqtt-contract.md "The status"): its lastSeq (the highest seq the
   * gateway had written) can only grow the site's known range, and whether it is online now.
   */
  noteStatus(siteId: string, prefix: string, online: boolean, lastSeq: number | null, time: number, now: number) {
    return this.db.tx(async (db) => {
      await db.run(
        `INSERT INTO sites (site_id, prefix, first_seen_at, last_message_at, offline) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (site_id) DO UPDATE SET prefix = excluded.prefix, offline = excluded.offline`,
        [siteId, prefix, now, now, online ? 0 : 1],
      );
      if (lastSeq !== null)
        await db.run(
          `UPDATE sites SET last_seq = ?, last_seq_time = ? WHERE site_id = ? AND (last_seq IS NULL OR last_seq < ?)`,
          [lastSeq, time, siteId, lastSeq],
        );
    });
  }

  /**
   * A retained delivery (the broker's stored copy, sent at subscribe): kept as the site's latest
   * state when its seq is newer, but never entered in the seq ledger (docs/mqtt-contract.md
   * "Retained messages"): it was sent before this consumer may have existed.
   */
  keepState(siteId: string, seq: number, msg: Incoming & { kind: 'state' }): Promise<number> {
    return this.db.run(STATE_UPSERT, [siteId, msg.key, seq, msg.body]);
  }

  /** Sites whose last status said offline: a resync asked now would be lost. */
  async offlineSites(): Promise<Set<string>> {
    return new Set(
      (await this.db.all<{ site_id: string }>('SELECT site_id FROM sites WHERE offline = 1')).map((r) => r.site_id),
    );
  }

  /** Holes not closed yet (open, requested or accepted). */
  async openHoles(): Promise<Hole[]> {
    const sql = `SELECT h.*, s.prefix FROM holes h JOIN sites s USING (site_id) WHERE h.status IN ('open', 'requested', 'accepted') ORDER BY h.id`;
    return (await this.db.all<Record<string, unknown>>(sql)).map(toHole);
  }

  async holes(): Promise<Hole[]> {
    return (
      await this.db.all<Record<string, unknown>>(
        'SELECT h.*, s.prefix FROM holes h JOIN sites s USING (site_id) ORDER BY h.id',
      )
    ).map(toHole);
  }

  /** Records a hole seen for the first time; returns its id. */
  async addHole(g: Gap, interval: string, now: number): Promise<number> {
    const [row] = await this.db.all<{ id: number }>(
      'INSERT INTO holes (site_id, from_seq, to_seq, interval, detected_at) VALUES (?, ?, ?, ?, ?) RETURNING id',
      [g.siteId, g.fromSeq, g.toSeq, interval, now],
    );
    if (!row) throw new Error('the database returned no id for a new hole');
    return row.id;
  }

  /**
   * Takes the hole for a (new) request: true for exactly one instance when several race, the
   * one whose update found it still due (status and attempts as it read them).
   */
  async claim(id: number, attempts: number, requestId: string, now: number): Promise<boolean> {
    const sql = `UPDATE holes SET status = 'requested', request_id = ?, requested_at = ?, attempts = attempts + 1
      WHERE id = ? AND attempts = ? AND status IN ('open', 'requested', 'accepted')`;
    return (await this.db.run(sql, [requestId, now, id, attempts])) === 1;
  }

  /** The gateway accepted the request: the hole is filled once firstSeq..lastSeq are all here. */
  async accepted(requestId: string, firstSeq: number | null, lastSeq: number | null): Promise<void> {
    const sql = `UPDATE holes SET status = 'accepted', first_seq = ?, last_seq = ? WHERE request_id = ? AND status = 'requested'`;
    await this.db.run(sql, [firstSeq, lastSeq, requestId]);
  }

  /**
   * Closes a hole: `filled` (the resync's messages are here) or `arrived` (its own seqs came after
   * all). A filled hole's seqs are entered as received: they are gone from the gateway for good
   * and the resync replaced what they carried, so the site's runs join again.
   */
  closeHole(h: Hole, status: 'filled' | 'arrived', now: number): Promise<void> {
    return this.db.tx(async (db) => {
      await this.lockSite(db, h.siteId);
      const sql = `UPDATE holes SET status = ?, closed_at = ? WHERE id = ? AND status IN ('open', 'requested', 'accepted')`;
      const changed = await db.run(sql, [status, now, h.id]);
      if (changed === 1 && status === 'filled')
        await db.run('UPDATE holes SET filled_seqs = ? WHERE id = ?', [await this.markHole(db, h), h.id]);
    });
  }

  /** Enters the hole's seqs still missing into the runs; how many that was. */
  private async markHole(db: SqlDb, h: Hole): Promise<number> {
    // only the part still missing: some of its seqs may have come late (and were counted as messages)
    let entered = 0;
    for (const g of await this.gaps(h.siteId, db)) {
      if (g.toSeq < h.fromSeq || g.fromSeq > h.toSeq) continue;
      const lo = Math.max(g.fromSeq, h.fromSeq);
      const hi = Math.min(g.toSeq, h.toSeq);
      await this.mark(
        db,
        h.siteId,
        lo,
        hi,
        lo === g.fromSeq ? g.beforeTime : g.afterTime,
        hi === g.toSeq ? g.afterTime : g.beforeTime,
      );
      entered += hi - lo + 1;
    }
    return entered;
  }

  /** Per site: messages processed, duplicates dropped. */
  siteCounts(): Promise<{ siteId: string; messages: number; duplicates: number }[]> {
    return this.db.all('SELECT site_id AS "siteId", messages, duplicates FROM sites ORDER BY site_id');
  }

  /** Every stored telemetry key as `siteId|deviceId|start ISO`, with how many times the row was written. */
  async telemetryKeys(): Promise<Map<string, number>> {
    const rows = await this.db.all<{ site_id: string; device_id: string; interval: string; writes: number }>(
      'SELECT site_id, device_id, interval, writes FROM telemetry',
    );
    return new Map(
      rows.map((r) => [`${r.site_id}|${r.device_id}|${r.interval.slice(0, r.interval.indexOf('/'))}`, r.writes]),
    );
  }

  async telemetryEntry(
    siteId: string,
    deviceId: string,
    start: number,
  ): Promise<{ seq: number; resync: string | null; entry: string } | undefined> {
    const sql = 'SELECT seq, resync, entry FROM telemetry WHERE site_id = ? AND device_id = ? AND start = ?';
    const [row] = await this.db.all<{ seq: number; resync: string | null; entry: string }>(sql, [
      siteId,
      deviceId,
      start,
    ]);
    return row;
  }
}

function toHole(r: Record<string, unknown>): Hole {
  return {
    id: r.id as number,
    siteId: r.site_id as string,
    prefix: r.prefix as string,
    fromSeq: r.from_seq as number,
    toSeq: r.to_seq as number,
    interval: r.interval as string,
    detectedAt: r.detected_at as number,
    requestId: (r.request_id as string | null) ?? null,
    requestedAt: (r.requested_at as number | null) ?? null,
    attempts: r.attempts as number,
    firstSeq: (r.first_seq as number | null) ?? null,
    lastSeq: (r.last_seq as number | null) ?? null,
    status: r.status as Hole['status'],
    closedAt: (r.closed_at as number | null) ?? null,
    filledSeqs: r.filled_seqs == null ? null : Number(r.filled_seqs),
  };
}
