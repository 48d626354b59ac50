import type { Database, Statement } from 'better-sqlite3';
import { perConnection } from './per-connection.js';

/**
 * Stream ids are long strings (`inv1__bb_agg`); bucket rows carry a small integer instead so the
 * primary key stays compact.
 */
interface Stmts {
  find: Statement<[string], number>;
  insert: Statement<[string]>;
  all: Statement<[], [number, string]>;
}
const stmts = perConnection(
  (db): Stmts => ({
    find: db.prepare<[string], number>('SELECT id FROM streams WHERE key = ?').pluck(),
    insert: db.prepare<[string]>('INSERT INTO streams (key) VALUES (?) ON CONFLICT (key) DO NOTHING'),
    all: db.prepare<[], [number, string]>('SELECT id, key FROM streams ORDER BY id').raw(),
  }),
);

/** The integer id of a stream, created on first use. */
export function streamKey(db: Database, streamId: string): number {
  const s = stmts(db);
  const found = s.find.get(streamId);
  if (found !== undefined) return found;
  s.insert.run(streamId);
  return s.find.get(streamId)!;
}

/** The integer id of a stream, or undefined when nothing was ever stored for it. */
export function findStreamKey(db: Database, streamId: string): number | undefined {
  return stmts(db).find.get(streamId);
}

export function listStreams(db: Database): { key: number; streamId: string }[] {
  return stmts(db)
    .all.all()
    .map(([key, streamId]) => ({ key, streamId }));
}
