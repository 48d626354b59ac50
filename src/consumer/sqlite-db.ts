import { resolve } from 'node:path';
import type { Database } from 'better-sqlite3';
import { sqliteDriver } from '../store/driver.js';
import { type SqlDb, type SqlValue, schema } from './sql.js';

/**
 * Transactions waiting for a file, per file, across the connections of this process: the
 * ledger code awaits between statements, and a second connection's BEGIN IMMEDIATE in that
 * pause would block the thread in busy_timeout while the first can never commit.
 */
const queues = new Map<string, Promise<unknown>>();

/**
 * The consumer's ledger in one SQLite file. Several consumer processes may share the file: a
 * transaction is BEGIN IMMEDIATE, so the write lock is taken before the ledger is read.
 */
export class SqliteDb implements SqlDb {
  readonly dialect = 'sqlite';
  private readonly db: Database;
  private readonly file: string;
  private inTx = false;

  constructor(file: string) {
    this.file = resolve(file);
    this.db = new (sqliteDriver())(file);
    // two instances on one file wait for each other's short transactions
    this.db.pragma('busy_timeout = 10000');
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    // the grid events' de-duplication and their unique index commit together (sql.ts)
    const has = (table: string, column: string) =>
      (this.db.pragma(`table_info(${table})`) as { name: string }[]).some((c) => c.name === column);
    this.db.transaction(() => this.db.exec(schema('sqlite', has))).immediate();
  }

  async all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return this.db.prepare(sql).all(...params) as T[];
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return this.db.prepare(sql).run(...params).changes;
  }

  tx<T>(fn: (db: SqlDb) => Promise<T>): Promise<T> {
    if (this.inTx) return fn(this);
    const next = (queues.get(this.file) ?? Promise.resolve()).then(async () => {
      this.db.exec('BEGIN IMMEDIATE');
      this.inTx = true;
      try {
        const out = await fn(this);
        this.db.exec('COMMIT');
        return out;
      } catch (err) {
        this.db.exec('ROLLBACK');
        throw err;
      } finally {
        this.inTx = false;
      }
    });
    const settled = next.catch(() => undefined);
    queues.set(this.file, settled);
    void settled.then(() => {
      if (queues.get(this.file) === settled) queues.delete(this.file);
    });
    return next;
  }

  async close(): Promise<void> {
    await queues.get(this.file);
    this.db.close();
  }
}
