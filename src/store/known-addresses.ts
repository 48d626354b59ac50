/**
 * Addresses where an identity (the owner, a client) signed in successfully: such an address is
 * exempt from the identity's failed-attempt key (src/auth/rate-limit.ts), so it is kept across
 * restarts; otherwise, after a crash, hostile addresses could fill the owner's key and the
 * owner's own browser would be refused (issue 26 finding 4).
 */
import type { Database } from 'better-sqlite3';
import { writeTx } from './db.js';
import { perConnection } from './per-connection.js';

export interface KnownAddress {
  identity: string;
  address: string;
  /** ms epoch of the last successful sign-in from there */
  at: number;
}

const statements = perConnection((db: Database) => ({
  load: db.prepare<[number], KnownAddress>(
    'SELECT identity, address, at_ms AS at FROM known_addresses WHERE at_ms > ? ORDER BY at_ms',
  ),
  upsert: db.prepare<[string, string, number]>(
    `INSERT INTO known_addresses (identity, address, at_ms) VALUES (?, ?, ?)
     ON CONFLICT (identity, address) DO UPDATE SET at_ms = excluded.at_ms`,
  ),
  // the identity's newest `keep`, and nothing older than `since`, stay
  trim: db.prepare<[string, number, string, number]>(
    `DELETE FROM known_addresses WHERE identity = ? AND (at_ms <= ? OR address NOT IN
       (SELECT address FROM known_addresses WHERE identity = ? ORDER BY at_ms DESC LIMIT ?))`,
  ),
}));

/** The addresses still known (signed in after `since`), oldest first. */
export function loadKnownAddresses(db: Database, since: number): KnownAddress[] {
  return statements(db).load.all(since);
}

/** Records a sign-in; the identity keeps its newest `keep` addresses, none from before `since`. */
export function saveKnownAddress(db: Database, k: KnownAddress, keep: number, since: number): void {
  const s = statements(db);
  writeTx(db, () => {
    s.upsert.run(k.identity, k.address, k.at);
    s.trim.run(k.identity, since, k.identity, keep);
  });
}
