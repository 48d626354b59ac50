import { randomBytes } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { writeTx } from './db.js';

/** The tariff kinds of docs/design.md: which prices its values carry. */
export const TARIFF_KINDS = ['import', 'export', 'both'] as const;
export type TariffKind = (typeof TARIFF_KINDS)[number];

export interface TariffMeta {
  id: string;
  name: string;
  /** ISO 4217 */
  currency: string;
  /** IANA */
  timezone: string;
  kind: TariffKind;
}

/** One price interval; times in ms since epoch, [start, end). Prices per kWh, absent when the kind has none. */
export interface TariffValue {
  start: number;
  end: number;
  importPrice?: number;
  exportPrice?: number;
}

type ValueRow = [startS: number, endS: number, importPrice: number | null, exportPrice: number | null];

const toValue = ([s, e, imp, exp]: ValueRow): TariffValue => ({
  start: s * 1000,
  end: e * 1000,
  ...(imp !== null ? { importPrice: imp } : {}),
  ...(exp !== null ? { exportPrice: exp } : {}),
});

/** A stored tariff with the client that owns it; null = the site owner alone (created before owners were recorded). */
export interface StoredTariff extends TariffMeta {
  owner: string | null;
}

export function insertTariff(db: Database, t: TariffMeta, owner: string, createdAt: number): void {
  db.prepare(
    'INSERT INTO tariffs (id, name, currency, timezone, kind, owner_client, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  ).run(t.id, t.name, t.currency, t.timezone, t.kind, owner, createdAt);
}

export function findTariff(db: Database, id: string): StoredTariff | undefined {
  return db
    .prepare<[string], StoredTariff>(
      'SELECT id, name, currency, timezone, kind, owner_client AS owner FROM tariffs WHERE id = ?',
    )
    .get(id);
}

export function countTariffsOwnedBy(db: Database, clientId: string): number {
  return db.prepare<[string], number>('SELECT count(*) FROM tariffs WHERE owner_client = ?').pluck().get(clientId)!;
}

export function countValues(db: Database, tariffId: string): number {
  return db.prepare<[string], number>('SELECT count(*) FROM tariff_values WHERE tariff_id = ?').pluck().get(tariffId)!;
}

/** One accepted write of `count` values by a client, for its quota. */
export function recordTariffWrite(db: Database, clientId: string, atMs: number, count: number): void {
  db.prepare('INSERT INTO tariff_writes (client_id, at_ms, value_count) VALUES (?, ?, ?)').run(clientId, atMs, count);
}

/** The client's writes after `sinceMs`, oldest first; older rows of every client are deleted. */
export function tariffWritesSince(db: Database, clientId: string, sinceMs: number): { atMs: number; count: number }[] {
  db.prepare('DELETE FROM tariff_writes WHERE at_ms <= ?').run(sinceMs);
  return db
    .prepare<[string, number], { atMs: number; count: number }>(
      'SELECT at_ms AS atMs, value_count AS count FROM tariff_writes WHERE client_id = ? AND at_ms > ? ORDER BY at_ms',
    )
    .all(clientId, sinceMs);
}

/** Values whose start lies in [from, to), ascending. */
export function valuesStartingIn(db: Database, tariffId: string, from: number, to: number): TariffValue[] {
  return db
    .prepare<[string, number, number], ValueRow>(
      'SELECT start_s, end_s, import_price, export_price FROM tariff_values WHERE tariff_id = ? AND start_s >= ? AND start_s < ? ORDER BY start_s',
    )
    .raw()
    .all(tariffId, Math.ceil(from / 1000), Math.ceil(to / 1000))
    .map(toValue);
}

/**
 * Values overlapping [from, to), ascending. `maxLengthMs` bounds how far back a value that
 * reaches into the range can start, so the primary key serves the lookup.
 */
export function valuesOverlapping(
  db: Database,
  tariffId: string,
  from: number,
  to: number,
  maxLengthMs: number,
): TariffValue[] {
  const fromS = Math.floor(from / 1000);
  return db
    .prepare<[string, number, number, number], ValueRow>(
      `SELECT start_s, end_s, import_price, export_price FROM tariff_values
        WHERE tariff_id = ? AND start_s > ? AND start_s < ? AND end_s > ? ORDER BY start_s`,
    )
    .raw()
    .all(tariffId, fromS - Math.ceil(maxLengthMs / 1000), Math.ceil(to / 1000), fromS)
    .map(toValue);
}

/** Whether any value starts in [from, to): does another page exist further back. */
export function anyValueStartingIn(db: Database, tariffId: string, from: number, to: number): boolean {
  const row = db
    .prepare<[string, number, number], number>(
      'SELECT 1 FROM tariff_values WHERE tariff_id = ? AND start_s >= ? AND start_s < ? LIMIT 1',
    )
    .pluck()
    .get(tariffId, Math.ceil(from / 1000), Math.ceil(to / 1000));
  return row !== undefined;
}

/** Deletes `remove` (by start) and inserts `add`, in one transaction (joins the caller's). */
export function replaceValues(
  db: Database,
  tariffId: string,
  remove: readonly TariffValue[],
  add: readonly TariffValue[],
): void {
  const del = db.prepare('DELETE FROM tariff_values WHERE tariff_id = ? AND start_s = ?');
  const ins = db.prepare(
    'INSERT INTO tariff_values (tariff_id, start_s, end_s, import_price, export_price) VALUES (?, ?, ?, ?, ?)',
  );
  writeTx(db, () => {
    for (const v of remove) del.run(tariffId, v.start / 1000);
    for (const v of add) ins.run(tariffId, v.start / 1000, v.end / 1000, v.importPrice ?? null, v.exportPrice ?? null);
  });
}

const keys = new WeakMap<Database, Buffer>();

/**
 * The key that signs page tokens, created on first use. Read before it is written: a GET is a
 * read, and a read must work on a data disk that takes no writes (docs/design.md "Field faults: what the numbers survive").
 */
export function pageTokenKey(db: Database): Buffer {
  let key = keys.get(db);
  if (!key) {
    const stored = () => db.prepare<[], Buffer>('SELECT key FROM tariff_page_key WHERE id = 1').pluck().get();
    key = stored();
    if (!key) {
      db.prepare('INSERT OR IGNORE INTO tariff_page_key (id, key) VALUES (1, ?)').run(randomBytes(32));
      key = stored()!;
    }
    keys.set(db, key);
  }
  return key;
}
