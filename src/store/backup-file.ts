/**
 * The SQL of a backup file (ops/backup.ts): one file that holds the buckets' database and the
 * credentials, so a copy taken off the box cannot lose half of itself.
 */
import type { Database } from 'better-sqlite3';
import { CRED_SCHEMA, CRED_TABLES } from './credentials.js';
import { writeTx } from './db.js';

/**
 * Puts the credential tables of the attached `cred` into main. Their stored DDL names no schema,
 * so it creates main's tables; openDatabase moves them back into a credentials file when the
 * backup is restored.
 */
export function embedCredentials(db: Database): void {
  const ddl = db
    .prepare<[], string>(`SELECT sql FROM ${CRED_SCHEMA}.sqlite_master WHERE sql IS NOT NULL ORDER BY rowid`)
    .pluck()
    .all();
  writeTx(db, () => {
    for (const sql of ddl) db.exec(sql);
    for (const t of CRED_TABLES) db.exec(`INSERT INTO main.${t} SELECT * FROM ${CRED_SCHEMA}.${t}`);
  });
}
