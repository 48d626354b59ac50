import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { DatabaseVersionError, migrate, openDatabase, schemaVersion } from '../../src/store/db.js';
import { sqliteDriver } from '../../src/store/driver.js';
import { type Migration, SCHEMA_VERSION } from '../../src/store/migrations.js';

// the build that suits this Node (src/store/driver.ts)
const BetterSqlite3 = sqliteDriver();

const dirs: string[] = [];
function tempFile(...parts: string[]): string {
  const d = mkdtempSync(join(tmpdir(), 'sitegw-store-'));
  dirs.push(d);
  return join(d, ...parts);
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const tables = (db: Database) =>
  db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();

describe('openDatabase', () => {
  it('gives a fresh database the current schema version and its tables', () => {
    const db = openDatabase(':memory:');
    expect(SCHEMA_VERSION).toBeGreaterThan(0);
    expect(schemaVersion(db)).toBe(SCHEMA_VERSION);
    expect(tables(db)).toEqual(expect.arrayContaining(['buckets', 'energy_state', 'streams']));
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    db.close();
  });

  it('creates the parent directory and uses WAL with synchronous=NORMAL', () => {
    const file = tempFile('nested', 'deeper', 'sitegw.db');
    const db = openDatabase(file);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(1);
    expect(db.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0);
    db.close();
  });

  it("caps SQLite's page cache at 2 MiB instead of better-sqlite3's 16 MiB build default", () => {
    const db = openDatabase(tempFile('sitegw.db'));
    expect(db.pragma('cache_size', { simple: true })).toBe(-2048);
    db.close();
  });

  it('reopening an up-to-date file changes nothing and keeps the data', () => {
    const file = tempFile('sitegw.db');
    const a = openDatabase(file);
    a.prepare('INSERT INTO streams (key) VALUES (?)').run('bat1__bb_agg');
    a.close();
    const b = openDatabase(file);
    expect(schemaVersion(b)).toBe(SCHEMA_VERSION);
    expect(b.prepare('SELECT key FROM streams').pluck().all()).toEqual(['bat1__bb_agg']);
    b.close();
  });

  it('refuses a database written by a newer version, naming both versions', () => {
    const file = tempFile('sitegw.db');
    openDatabase(file).close();
    const raw = new BetterSqlite3(file);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 3}`);
    raw.close();
    let err: unknown;
    try {
      openDatabase(file);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DatabaseVersionError);
    expect((err as Error).message).toContain(`schema version ${SCHEMA_VERSION + 3}`);
    expect((err as Error).message).toContain(`up to ${SCHEMA_VERSION}`);
  });
});

describe('migrate', () => {
  it('runs each pending step once, in order, and records the version', () => {
    const db = new BetterSqlite3(':memory:');
    const ran: number[] = [];
    const steps: Migration[] = [
      { description: 'one', up: (d) => (d.exec('CREATE TABLE a (x)'), ran.push(1)) },
      { description: 'two', up: (d) => (d.exec('CREATE TABLE b (x)'), ran.push(2)) },
    ];
    migrate(db, steps.slice(0, 1));
    expect(schemaVersion(db)).toBe(1);
    migrate(db, steps);
    migrate(db, steps);
    expect(ran).toEqual([1, 2]);
    expect(schemaVersion(db)).toBe(2);
    db.close();
  });

  it('rolls a failing step back entirely, leaving the previous version', () => {
    const db = new BetterSqlite3(':memory:');
    const steps: Migration[] = [
      { description: 'ok', up: (d) => d.exec('CREATE TABLE a (x)') },
      {
        description: 'fails halfway',
        up: (d) => {
          d.exec('CREATE TABLE b (x)');
          throw new Error('boom');
        },
      },
    ];
    expect(() => migrate(db, steps)).toThrow('boom');
    expect(schemaVersion(db)).toBe(1);
    expect(tables(db)).toEqual(['a']);
    db.close();
  });
});
