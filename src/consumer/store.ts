import type { Database } from 'better-sqlite3';
import { sqliteDriver } from '../store/driver.js';

/**
 * The reference consumer's own database (cloud side, not the gateway's: its own file and schema,
 * which is why it lives beside the consumer rather than in src/store/ with the gateway's
 * migrations). Several consumer processes may share one file: every message is one IMMEDIATE
 * transaction, so the per-site seq ledger stays exact whichever instance a message reached.
 *
 * Per site it keeps (docs/mqtt-contract.md "What a consumer keeps per site"):
 * - `seq_ranges`: the seqs received, as runs [lo, hi] with the `time` of both ends; normally one
 *   row per site. A seq inside a run is a duplicate; the space between two runs is a hole.
 * - `holes`: each hole found, when, the resync asked for it and when it was filled.
 * - `telemetry`: entries upserted by deviceId + interval start; a higher seq wins, so the order
 *   in which redeliveries and resyncs arrive does not matter.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS sites (
  site_id TEXT PRIMARY KEY, prefix TEXT NOT NULL, first_seen_at INTEGER NOT NULL, last_message_at INTEGER NOT NULL,
  messages INTEGER NOT NULL DEFAULT 0, duplicates INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS seq_ranges (
  site_id TEXT NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL, lo_time INTEGER NOT NULL, hi_time INTEGER NOT NULL,
  PRIMARY KEY (site_id, lo)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS holes (
  id INTEGER PRIMARY KEY, site_id TEXT NOT NULL, from_seq INTEGER NOT NULL, to_seq INTEGER NOT NULL,
  interval TEXT NOT NULL, detected_at INTEGER NOT NULL, request_id TEXT, requested_at INTEGER, attempts INTEGER NOT NULL DEFAULT 0,
  first_seq INTEGER, last_seq INTEGER, status TEXT NOT NULL DEFAULT 'open', closed_at INTEGER
);
CREATE INDEX IF NOT EXISTS holes_open ON holes (status, site_id);
CREATE TABLE IF NOT EXISTS telemetry (
  site_id TEXT NOT NULL, device_id TEXT NOT NULL, start INTEGER NOT NULL, interval TEXT NOT NULL, device_kind TEXT NOT NULL,
  seq INTEGER NOT NULL, resync TEXT, entry TEXT NOT NULL, received_at INTEGER NOT NULL, writes INTEGER NOT NULL DEFAULT 1,
  PRIMARY KEY (site_id, device_id, start)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS grid_events (
  site_id TEXT NOT NULL, seq INTEGER NOT NULL, device_id TEXT NOT NULL, timestamp TEXT NOT NULL, state TEXT NOT NULL,
  PRIMARY KEY (site_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS site_state (
  site_id TEXT NOT NULL, key TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (site_id, key)
) WITHOUT ROWID;
`;

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
}

export interface Gap {
  siteId: string;
  fromSeq: number;
  toSeq: number;
  /** `time` of the messages on either side, ms */
  beforeTime: number;
  afterTime: number;
}

export class ConsumerStore {
  readonly db: Database;

  constructor(file: string) {
    this.db = new (sqliteDriver())(file);
    // two instances on one file wait for each other's short transactions
    this.db.pragma('busy_timeout = 10000');
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(SCHEMA);
  }

  close(): void {
    this.db.close();
  }

  /** Runs fn in an IMMEDIATE transaction: the write lock is taken before the ledger is read. */
  private tx<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  /**
   * One message with a seq: false when that seq was already processed (nothing written).
   * Otherwise records the seq and stores what the message carries, in one transaction.
   */
  accept(siteId: string, prefix: string, seq: number, time: number, msg: Incoming, now: number): boolean {
    return this.tx(() => {
      const db = this.db;
      db.prepare(
        `INSERT INTO sites (site_id, prefix, first_seen_at, last_message_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (site_id) DO UPDATE SET prefix = excluded.prefix, last_message_at = excluded.last_message_at`,
      ).run(siteId, prefix, now, now);
      if (!this.mark(siteId, seq, seq, time, time)) {
        db.prepare('UPDATE sites SET duplicates = duplicates + 1 WHERE site_id = ?').run(siteId);
        return false;
      }
      db.prepare('UPDATE sites SET messages = messages + 1 WHERE site_id = ?').run(siteId);
      if (msg.kind === 'telemetry') {
        const up = db.prepare(
          `INSERT INTO telemetry (site_id, device_id, start, interval, device_kind, seq, resync, entry, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (site_id, device_id, start) DO UPDATE SET seq = excluded.seq, resync = excluded.resync, entry = excluded.entry,
             received_at = excluded.received_at, interval = excluded.interval, device_kind = excluded.device_kind, writes = writes + 1
           WHERE excluded.seq > telemetry.seq`,
        );
        for (const e of msg.entries) up.run(siteId, e.deviceId, e.start, e.interval, e.deviceKind, seq, msg.resync, e.entry, now);
      } else if (msg.kind === 'grid-event') {
        db.prepare('INSERT INTO grid_events (site_id, seq, device_id, timestamp, state) VALUES (?, ?, ?, ?, ?)').run(siteId, seq, msg.deviceId, msg.timestamp, msg.state);
      } else {
        db.prepare(
          `INSERT INTO site_state (site_id, key, seq, body) VALUES (?, ?, ?, ?)
           ON CONFLICT (site_id, key) DO UPDATE SET seq = excluded.seq, body = excluded.body WHERE excluded.seq > site_state.seq`,
        ).run(siteId, msg.key, seq, msg.body);
      }
      return true;
    });
  }

  /**
   * Adds [lo, hi] to the site's runs, joining neighbours; false when any of it was there already
   * (only whole new messages, lo = hi, or a hole's seqs, which are never received, come here).
   */
  private mark(siteId: string, lo: number, hi: number, loTime: number, hiTime: number): boolean {
    const db = this.db;
    const inside = db.prepare('SELECT 1 FROM seq_ranges WHERE site_id = ? AND lo <= ? AND hi >= ? LIMIT 1').get(siteId, hi, lo);
    if (inside) return false;
    const before = db.prepare('SELECT lo, lo_time FROM seq_ranges WHERE site_id = ? AND hi = ?').get(siteId, lo - 1) as { lo: number; lo_time: number } | undefined;
    const after = db.prepare('SELECT hi, hi_time FROM seq_ranges WHERE site_id = ? AND lo = ?').get(siteId, hi + 1) as { hi: number; hi_time: number } | undefined;
    const nlo = before?.lo ?? lo;
    const nloTime = before?.lo_time ?? loTime;
    const nhi = after?.hi ?? hi;
    const nhiTime = after?.hi_time ?? hiTime;
    if (before) db.prepare('DELETE FROM seq_ranges WHERE site_id = ? AND lo = ?').run(siteId, before.lo);
    if (after) db.prepare('DELETE FROM seq_ranges WHERE site_id = ? AND lo = ?').run(siteId, hi + 1);
    db.prepare('INSERT INTO seq_ranges (site_id, lo, hi, lo_time, hi_time) VALUES (?, ?, ?, ?, ?)').run(siteId, nlo, nhi, nloTime, nhiTime);
    return true;
  }

  /** Whether every seq of [lo, hi] was received. */
  covered(siteId: string, lo: number, hi: number): boolean {
    return this.db.prepare('SELECT 1 FROM seq_ranges WHERE site_id = ? AND lo <= ? AND hi >= ?').get(siteId, lo, hi) !== undefined;
  }

  /** The spaces between received runs, per site. */
  gaps(): Gap[] {
    const rows = this.db.prepare('SELECT site_id, lo, hi, lo_time, hi_time FROM seq_ranges ORDER BY site_id, lo').raw().all() as [string, number, number, number, number][];
    const out: Gap[] = [];
    for (let i = 1; i < rows.length; i++) {
      const [site, lo, , loTime] = rows[i]!;
      const [prevSite, , prevHi, , prevHiTime] = rows[i - 1]!;
      if (site === prevSite) out.push({ siteId: site, fromSeq: prevHi + 1, toSeq: lo - 1, beforeTime: prevHiTime, afterTime: loTime });
    }
    return out;
  }

  /** Holes not closed yet (open, requested or accepted). */
  openHoles(): Hole[] {
    return (this.db.prepare(`SELECT h.*, s.prefix FROM holes h JOIN sites s USING (site_id) WHERE h.status IN ('open', 'requested', 'accepted')`).all() as Record<string, unknown>[]).map(toHole);
  }

  holes(): Hole[] {
    return (this.db.prepare('SELECT h.*, s.prefix FROM holes h JOIN sites s USING (site_id) ORDER BY h.id').all() as Record<string, unknown>[]).map(toHole);
  }

  /** Records a hole seen for the first time; returns its id. */
  addHole(g: Gap, interval: string, now: number): number {
    return Number(
      this.db.prepare('INSERT INTO holes (site_id, from_seq, to_seq, interval, detected_at) VALUES (?, ?, ?, ?, ?)').run(g.siteId, g.fromSeq, g.toSeq, interval, now).lastInsertRowid,
    );
  }

  /**
   * Takes the hole for a (new) request: true for exactly one instance when several race, the
   * one whose update found it still due (status and attempts as it read them).
   */
  claim(id: number, attempts: number, requestId: string, now: number): boolean {
    return (
      this.db
        .prepare(`UPDATE holes SET status = 'requested', request_id = ?, requested_at = ?, attempts = attempts + 1 WHERE id = ? AND attempts = ? AND status IN ('open', 'requested', 'accepted')`)
        .run(requestId, now, id, attempts).changes === 1
    );
  }

  /** The gateway accepted the request: the hole is filled once firstSeq..lastSeq are all here. */
  accepted(requestId: string, firstSeq: number | null, lastSeq: number | null): void {
    this.db.prepare(`UPDATE holes SET status = 'accepted', first_seq = ?, last_seq = ? WHERE request_id = ? AND status = 'requested'`).run(firstSeq, lastSeq, requestId);
  }

  /**
   * Closes a hole: `filled` (the resync's messages are here) or `arrived` (its own seqs came after
   * all). A filled hole's seqs are entered as received: they are gone from the gateway for good
   * and the resync replaced what they carried, so the site's runs join again.
   */
  closeHole(h: Hole, status: 'filled' | 'arrived', now: number): void {
    this.tx(() => {
      const changed = this.db.prepare(`UPDATE holes SET status = ?, closed_at = ? WHERE id = ? AND status IN ('open', 'requested', 'accepted')`).run(status, now, h.id).changes;
      if (changed === 1 && status === 'filled') this.markHole(h);
    });
  }

  private markHole(h: Hole): void {
    // only the part still missing: some of its seqs may have come late
    for (const g of this.gaps()) {
      if (g.siteId !== h.siteId || g.toSeq < h.fromSeq || g.fromSeq > h.toSeq) continue;
      const lo = Math.max(g.fromSeq, h.fromSeq);
      const hi = Math.min(g.toSeq, h.toSeq);
      this.mark(h.siteId, lo, hi, lo === g.fromSeq ? g.beforeTime : g.afterTime, hi === g.toSeq ? g.afterTime : g.beforeTime);
    }
  }

  /** Per site: messages processed, duplicates dropped. */
  siteCounts(): { siteId: string; messages: number; duplicates: number }[] {
    return this.db.prepare('SELECT site_id AS siteId, messages, duplicates FROM sites ORDER BY site_id').all() as { siteId: string; messages: number; duplicates: number }[];
  }

  /** Every stored telemetry key as `siteId|deviceId|start ISO`, with how many times the row was written. */
  telemetryKeys(): Map<string, number> {
    const rows = this.db.prepare('SELECT site_id, device_id, interval, writes FROM telemetry').raw().all() as [string, string, string, number][];
    return new Map(rows.map(([s, d, i, w]) => [`${s}|${d}|${i.slice(0, i.indexOf('/'))}`, w]));
  }

  telemetryEntry(siteId: string, deviceId: string, start: number): { seq: number; resync: string | null; entry: string } | undefined {
    return this.db.prepare('SELECT seq, resync, entry FROM telemetry WHERE site_id = ? AND device_id = ? AND start = ?').get(siteId, deviceId, start) as
      | { seq: number; resync: string | null; entry: string }
      | undefined;
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
  };
}
