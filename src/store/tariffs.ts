import { randomBytes } from 'node:crypto';
import type { Database } from 'better-sqlite3';

/** The tariff kinds of design.md: which prices its values carry. */
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

export function insertTariff(db: Database, t: TariffMeta, createdAt: number): void {
  db.prepare('INSERT INTO tariffs (id, name, currency, timezone, kind, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(
    t.id,
    t.name,
    t.currency,
    t.timezone,
    t.kind,
    createdAt,
  );
}

export function findTariff(db: Database, id: string): TariffMeta | undefined {
  return db.prepare<[string], TariffMeta>('SELECT id, name, currency, timezone, kind FROM tariffs WHERE id = ?').get(id);
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
export function valuesOverlapping(db: Database, tariffId: string, from: number, to: number, maxLengthMs: number): TariffValue[] {
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
    .prepare<[string, number, number], number>('SELECT 1 FROM tariff_values WHERE tariff_id = ? AND start_s >= ? AND start_s < ? LIMIT 1')
    .pluck()
    .get(tariffId, Math.ceil(from / 1000), Math.ceil(to / 1000));
  return row !== undefined;
}

/** Deletes `remove` (by start) and inserts `add`, in one transaction (joins the caller's). */
export function replaceValues(db: Database, tariffId: string, remove: readonly TariffValue[], add: readonly TariffValue[]): void {
  const del = db.prepare('DELETE FROM tariff_values WHERE tariff_id = ? AND start_s = ?');
  const ins = db.prepare('INSERT INTO tariff_values (tariff_id, start_s, end_s, import_price, export_price) VALUES (?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (const v of remove) del.run(tariffId, v.start / 1000);
    for (const v of add) ins.run(tariffId, v.start / 1000, v.end / 1000, v.importPrice ?? null, v.exportPrice ?? null);
  })();
}

const keys = new WeakMap<Database, Buffer>();

/** The key that signs page tokens, created on first use. */
export function pageTokenKey(db: Database): Buffer {
  let key = keys.get(db);
  if (!key) {
    db.prepare('INSERT OR IGNORE INTO tariff_page_key (id, key) VALUES (1, ?)').run(randomBytes(32));
    key = db.prepare<[], Buffer>('SELECT key FROM tariff_page_key WHERE id = 1').pluck().get()!;
    keys.set(db, key);
  }
  return key;
}
