/**
 * A WAL file removed while the database is open (an operator's rm, a cleaning script; issue 41,
 * finding 7). SQLite keeps writing into the open, now nameless file: every commit since the last
 * checkpoint would be gone at the next open, and another process opening the database meanwhile
 * would start a second WAL of its own. Repaired in place, on this connection: a checkpoint copies
 * the nameless WAL's frames into the database file, and leaving WAL mode and entering it again
 * closes the old WAL and its index and creates new ones under their names. Both steps need the
 * other connections' read locks gone; a busy one is tried again at the next look.
 * https://sqlite.org/wal.html, https://sqlite.org/pragma.html#pragma_wal_checkpoint
 */
import { existsSync } from 'node:fs';
import type { Database } from 'better-sqlite3';
import { CRED_SCHEMA, credentialsFileOf } from './credentials.js';

export interface WalRepair {
  /** the WAL file that was missing */
  file: string;
  /** true once the new WAL is in place; false while another connection kept it from it */
  repaired: boolean;
}

/** The WAL files of this connection's database and credentials file that are missing, repaired where it can. */
export function repairVanishedWal(db: Database): WalRepair[] {
  if (db.memory || db.readonly) return [];
  const out: WalRepair[] = [];
  for (const [schema, file] of [
    ['main', db.name],
    [CRED_SCHEMA, credentialsFileOf(db.name)],
  ] as const) {
    const wal = `${file}-wal`;
    if (existsSync(wal)) continue;
    // exclusive locking (a start on a full disk) keeps no -shm, but its WAL is a file all the same
    if (db.pragma(`${schema}.journal_mode`, { simple: true }) !== 'wal') continue;
    let repaired = false;
    try {
      const [r] = db.pragma(`${schema}.wal_checkpoint(TRUNCATE)`) as { busy: number }[];
      if (r?.busy === 0) {
        db.pragma(`${schema}.journal_mode = DELETE`);
        db.pragma(`${schema}.journal_mode = WAL`);
        // SQLite creates the WAL at the first write: one, so the file is there for other processes
        const v = db.pragma(`${schema}.user_version`, { simple: true }) as number;
        db.pragma(`${schema}.user_version = ${v}`);
        repaired = existsSync(wal);
      }
    } catch {
      repaired = false;
    }
    out.push({ file: wal, repaired });
  }
  return out;
}
