import pg from 'pg';
import { type SqlDb, type SqlValue, schema } from './sql.js';

/** `?` placeholders to PostgreSQL's `$1, $2, …` (the ledger's SQL has no `?` inside literals). */
const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/** A database URL as it may be printed: its password left out. */
export function printableUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the PostgreSQL URL given';
  }
}

/** BIGINT columns (epoch ms, seqs) as numbers: they stay far below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8
      ? Number
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

class Querier implements SqlDb {
  readonly dialect = 'postgres';
  constructor(protected readonly q: pg.Pool | pg.PoolClient) {}

  async all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return (await this.q.query(numbered(sql), [...params])).rows as T[];
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return (await this.q.query(numbered(sql), [...params])).rowCount ?? 0;
  }

  async tx<T>(fn: (db: SqlDb) => Promise<T>): Promise<T> {
    return fn(this);
  }

  async close(): Promise<void> {}
}

/**
 * The consumer's ledger in PostgreSQL, for consumers on several hosts. Each transaction runs on
 * its own pooled connection at READ COMMITTED; what keeps a site's ledger exact when two
 * instances take messages of the same site at once is the row lock on the site's `sites` row,
 * which every ledger transaction takes first (store.ts), so they queue per site.
 */
export class PostgresDb extends Querier {
  private constructor(private readonly pool: pg.Pool) {
    super(pool);
  }

  static async open(url: string): Promise<PostgresDb> {
    const pool = new pg.Pool({ connectionString: url, max: 4, types });
    // an idle connection that dies (server restart) is reported here; the next query reconnects
    pool.on('error', () => undefined);
    const db = new PostgresDb(pool);
    try {
      // two consumers starting at once would race on CREATE TABLE IF NOT EXISTS: one at a time
      await db.tx(async (t) => {
        await t.run('SELECT pg_advisory_xact_lock(7355608)');
        const cols = new Set(
          (
            await t.all<{ c: string }>(
              `SELECT table_name || '.' || column_name AS c FROM information_schema.columns WHERE table_schema = current_schema()`,
            )
          ).map((r) => r.c),
        );
        for (const stmt of schema('postgres', (table, column) => cols.has(`${table}.${column}`))
          .split(';')
          .filter((s) => s.trim()))
          await t.run(stmt);
      });
    } catch (err) {
      await pool.end();
      throw new Error(`PostgreSQL at ${printableUrl(url)}: ${(err as Error).message}`);
    }
    return db;
  }

  override async tx<T>(fn: (db: SqlDb) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let failed = false;
    try {
      await client.query('BEGIN');
      const out = await fn(new Querier(client));
      await client.query('COMMIT');
      return out;
    } catch (err) {
      failed = true;
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      // a connection that failed mid-transaction may be broken: it is closed, not pooled again
      client.release(failed);
    }
  }

  override async close(): Promise<void> {
    await this.pool.end();
  }
}
