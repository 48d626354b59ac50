/**
 * The credentials' own file: API clients and their devices, the site owner, codes, tokens and the
 * publishTo grants live in `credentials.db` beside `sitegw.db`, attached to every connection as
 * the schema `cred` (issue 41, finding 3: a damaged bucket file took every partner's sign-in with
 * it). SQLite finds an unqualified table name in main first, then in attached schemas, so the
 * statements of clients.ts, owner.ts, tokens.ts and publish-to.ts name no schema and are the same
 * for both layouts. The file is small and written only when a token or a client changes; bucket
 * closes never touch its pages. Its own schema version is `PRAGMA cred.user_version`.
 * https://sqlite.org/lang_attach.html, https://sqlite.org/lang_naming.html
 */
import { dirname, join } from 'node:path';
import type { Database } from 'better-sqlite3';

export const CRED_SCHEMA = 'cred';
export const CRED_FILE = 'credentials.db';

/** The credentials file of the database `file` (an in-memory database gets an in-memory one). */
export function credentialsFileOf(file: string): string {
  return file === ':memory:' ? ':memory:' : join(dirname(file), CRED_FILE);
}

/** Every credential table, parents before children (the copy's order; a drop goes the other way). */
export const CRED_TABLES = [
  'auth_clients',
  'auth_client_devices',
  'auth_owner',
  'auth_codes',
  'auth_tokens',
  'publish_to',
  'publish_to_audit',
] as const;

/** The credentials file's schema history; entries are only appended (as migrations.ts). */
export const CRED_MIGRATIONS: readonly { description: string; up: (db: Database) => void }[] = [
  {
    description: 'clients and their devices, the site owner, codes, tokens; publishTo with its audit trail',
    up(db) {
      // the columns of migrations.ts's second step, so rows copy across unchanged
      db.exec(`
        CREATE TABLE cred.auth_clients (
          id            TEXT PRIMARY KEY,
          name          TEXT NOT NULL,
          secret_hash   TEXT,
          scopes        TEXT NOT NULL,
          redirect_uris TEXT NOT NULL,
          created_at    INTEGER NOT NULL,
          removed_at    INTEGER
        );
        CREATE TABLE cred.auth_client_devices (
          client_id TEXT NOT NULL REFERENCES auth_clients(id),
          device_id TEXT NOT NULL,
          PRIMARY KEY (client_id, device_id)
        ) WITHOUT ROWID;
        CREATE TABLE cred.auth_owner (
          id            INTEGER PRIMARY KEY CHECK (id = 1),
          username      TEXT NOT NULL,
          password_hash TEXT NOT NULL,
          updated_at    INTEGER NOT NULL
        );
        CREATE TABLE cred.auth_codes (
          hash           TEXT PRIMARY KEY,
          client_id      TEXT NOT NULL,
          redirect_uri   TEXT NOT NULL,
          redirect_given INTEGER NOT NULL,
          scopes         TEXT NOT NULL,
          code_challenge TEXT,
          nonce          TEXT,
          family         TEXT NOT NULL,
          auth_time      INTEGER NOT NULL,
          expires_at     INTEGER NOT NULL,
          used_at        INTEGER
        );
        CREATE TABLE cred.auth_tokens (
          hash       TEXT PRIMARY KEY,
          kind       TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
          client_id  TEXT NOT NULL,
          customer   INTEGER NOT NULL,
          scopes     TEXT NOT NULL,
          family     TEXT NOT NULL,
          auth_time  INTEGER,
          created_at INTEGER NOT NULL,
          expires_at INTEGER NOT NULL,
          rotated_at INTEGER,
          revoked_at INTEGER
        );
        CREATE INDEX cred.auth_tokens_family ON auth_tokens (family);
        CREATE INDEX cred.auth_tokens_client ON auth_tokens (client_id);
        CREATE TABLE cred.publish_to (
          device_id TEXT NOT NULL,
          position  INTEGER NOT NULL,
          client_id TEXT NOT NULL,
          data      TEXT NOT NULL,
          PRIMARY KEY (device_id, client_id)
        ) WITHOUT ROWID;
        CREATE TABLE cred.publish_to_audit (
          id        INTEGER PRIMARY KEY,
          ts        INTEGER NOT NULL,
          device_id TEXT NOT NULL,
          by_client TEXT NOT NULL,
          before    TEXT NOT NULL,
          after     TEXT NOT NULL
        );
      `);
    },
  },
];

/** Whether main still holds credential tables (the layout before the credentials file). */
export function mainHoldsCredentials(db: Database): boolean {
  return (
    db.prepare("SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = 'auth_clients'").get() !== undefined
  );
}

/**
 * Copies main's credential rows into the credentials file, keeping what it has. Run in a
 * transaction of its own before main's tables are dropped: SQLite commits a transaction over two
 * WAL files one file at a time, so a crash between them must find the rows in both, not in neither.
 */
export function copyCredentialsFromMain(db: Database): void {
  for (const t of CRED_TABLES) db.exec(`INSERT OR IGNORE INTO cred.${t} SELECT * FROM main.${t}`);
}

/** Drops main's credential tables once copyCredentialsFromMain has committed (children first). */
export function dropCredentialsFromMain(db: Database): void {
  for (const t of [...CRED_TABLES].reverse()) db.exec(`DROP TABLE main.${t}`);
}

/** Clients ever registered (removed ones keep their row): zero in a credentials file that was lost. */
export function clientRows(db: Database): number {
  return db.prepare<[], number>('SELECT count(*) FROM auth_clients').pluck().get()!;
}
