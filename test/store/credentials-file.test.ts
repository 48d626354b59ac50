/**
 * The credentials' own file (src/store/credentials.ts): a database of the old layout (credentials
 * in sitegw.db) is moved over at its first open, twice-run copies leave one row each, and another
 * process's write to a client moves the change stamp the token cache watches.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backupDatabase, restoreDatabase } from '../../src/ops/backup.js';
import { CRED_MIGRATIONS, copyCredentialsFromMain } from '../../src/store/credentials.js';
import { changeStamp, migrate, openDatabase, schemaVersion } from '../../src/store/db.js';
import { sqliteDriver } from '../../src/store/driver.js';
import { CREDENTIALS_MOVED, MIGRATIONS, SCHEMA_VERSION } from '../../src/store/migrations.js';

const BetterSqlite3 = sqliteDriver();
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sitegw-cred-'));
  dirs.push(d);
  return d;
}

/** sitegw.db as the version before the credentials file left it, with a client, the owner and a grant. */
function oldLayout(file: string): void {
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  migrate(db, MIGRATIONS.slice(0, CREDENTIALS_MOVED - 1));
  db.prepare(
    "INSERT INTO auth_clients (id, name, secret_hash, scopes, redirect_uris, created_at) VALUES ('p1', 'P1', 'h', 'svc/device.read', '[]', 1)",
  ).run();
  db.prepare("INSERT INTO auth_client_devices (client_id, device_id) VALUES ('p1', 'inv')").run();
  db.prepare("INSERT INTO auth_owner (id, username, password_hash, updated_at) VALUES (1, 'me', 'ph', 1)").run();
  db.prepare("INSERT INTO publish_to (device_id, position, client_id, data) VALUES ('inv', 0, 'p1', '[]')").run();
  db.close();
}

const tables = (db: InstanceType<typeof BetterSqlite3>, schema: string) =>
  db.prepare(`SELECT name FROM ${schema}.sqlite_master WHERE type = 'table'`).pluck().all() as string[];

describe('credentials.db', () => {
  it('a fresh data directory gets both files; main holds no credential table', () => {
    const dir = dataDir();
    const db = openDatabase(join(dir, 'sitegw.db'));
    expect(existsSync(join(dir, 'credentials.db'))).toBe(true);
    expect(tables(db, 'main')).not.toContain('auth_clients');
    expect(tables(db, 'cred')).toEqual(expect.arrayContaining(['auth_clients', 'auth_owner', 'publish_to']));
    expect(schemaVersion(db)).toBe(SCHEMA_VERSION);
    db.close();
  });

  it('the old layout is moved over at the first open, and only once', () => {
    const dir = dataDir();
    const file = join(dir, 'sitegw.db');
    oldLayout(file);
    const db = openDatabase(file);
    expect(tables(db, 'main')).not.toContain('auth_clients');
    expect(db.prepare('SELECT id FROM auth_clients').pluck().all()).toEqual(['p1']);
    expect(db.prepare('SELECT device_id FROM auth_client_devices').pluck().all()).toEqual(['inv']);
    expect(db.prepare('SELECT username FROM auth_owner').pluck().all()).toEqual(['me']);
    expect(db.prepare('SELECT client_id FROM publish_to').pluck().all()).toEqual(['p1']);
    db.close();
    // the credentials file alone holds them now
    const cred = new BetterSqlite3(join(dir, 'credentials.db'), { readonly: true });
    expect(cred.prepare('SELECT count(*) FROM auth_clients').pluck().get()).toBe(1);
    cred.close();
    const again = openDatabase(file);
    expect(again.prepare('SELECT count(*) FROM auth_clients').pluck().get()).toBe(1);
    again.close();
  });

  it('a move interrupted after the copy committed (main still at the old version) leaves one row each', () => {
    const dir = dataDir();
    const file = join(dir, 'sitegw.db');
    oldLayout(file);
    // the copy's own commit, then a stop before the migration: what a kill between them leaves
    const db = new BetterSqlite3(file);
    db.prepare('ATTACH DATABASE ? AS cred').run(join(dir, 'credentials.db'));
    db.pragma('cred.journal_mode = WAL');
    migrate(db, CRED_MIGRATIONS, 'credentials.db', 'cred');
    copyCredentialsFromMain(db);
    db.close();
    const opened = openDatabase(file);
    expect(opened.prepare('SELECT count(*) FROM auth_clients').pluck().get()).toBe(1);
    expect(opened.prepare('SELECT count(*) FROM publish_to').pluck().get()).toBe(1);
    opened.close();
  });

  it('a backup is one file with the credentials in it; restored, they are in the credentials file again', async () => {
    const from = dataDir();
    const db = openDatabase(join(from, 'sitegw.db'));
    db.prepare(
      "INSERT INTO auth_clients (id, name, secret_hash, scopes, redirect_uris, created_at) VALUES ('p2', 'P2', 'h', '', '[]', 1)",
    ).run();
    db.prepare("INSERT INTO streams (key) VALUES ('inv__pv')").run();
    const out = join(dataDir(), 'backup.db');
    await backupDatabase(join(from, 'sitegw.db'), out);
    db.close();
    // restored over a data directory that has a database of its own: that one is kept aside
    const to = dataDir();
    openDatabase(join(to, 'sitegw.db')).close();
    const r = restoreDatabase(out, join(to, 'sitegw.db'), Date.UTC(2026, 0, 2));
    expect(r.movedAside).toEqual([
      join(to, 'sitegw.db.before-restore-20260102T000000Z'),
      join(to, 'credentials.db.before-restore-20260102T000000Z'),
    ]);
    const restored = openDatabase(join(to, 'sitegw.db'));
    expect(tables(restored, 'main')).not.toContain('auth_clients');
    expect(restored.prepare('SELECT id FROM cred.auth_clients').pluck().all()).toEqual(['p2']);
    expect(restored.prepare('SELECT key FROM streams').pluck().all()).toEqual(['inv__pv']);
    restored.close();
  });

  it("another process's change to a client moves the change stamp", () => {
    const file = join(dataDir(), 'sitegw.db');
    const a = openDatabase(file);
    const b = openDatabase(file);
    const before = changeStamp(a);
    b.prepare(
      "INSERT INTO auth_clients (id, name, secret_hash, scopes, redirect_uris, created_at) VALUES ('x', 'X', NULL, '', '[]', 1)",
    ).run();
    expect(changeStamp(a)).not.toEqual(before);
    a.close();
    b.close();
  });
});
