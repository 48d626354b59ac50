import type { Database } from 'better-sqlite3';

/**
 * What `prepare` makes for a connection (its statements), made on first use and kept with that
 * connection: preparing costs more than running most of these queries, and a WeakMap lets a
 * closed database's statements go with it.
 */
export function perConnection<T>(prepare: (db: Database) => T): (db: Database) => T {
  const made = new WeakMap<Database, T>();
  return (db) => {
    let v = made.get(db);
    if (v === undefined) {
      v = prepare(db);
      made.set(db, v);
    }
    return v;
  };
}
