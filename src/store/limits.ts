/**
 * The site's limit schedule (src/limits/schedule.ts checks it; docs/limits.md "The schedule"): one
 * per site, replaced whole, its slots at any whole second.
 */
import type { Database } from 'better-sqlite3';
import { writeTx } from './db.js';

export interface StoredLimitSlot {
  startMs: number;
  endMs: number;
  exportW: number | null;
  importW: number | null;
  generationW: number | null;
}

export interface StoredLimitSchedule {
  scheduleId: string;
  /** who wrote it: `partner:<clientId>`, `customer`, `cloud`, or a module's own name */
  source: string;
  createdMs: number;
  slots: StoredLimitSlot[];
}

interface SlotRow {
  start_ms: number;
  end_ms: number;
  export_w: number | null;
  import_w: number | null;
  generation_w: number | null;
}

export function limitScheduleOf(db: Database): StoredLimitSchedule | undefined {
  const head = db
    .prepare<[], { schedule_id: string; source: string; created_ms: number }>(
      'SELECT schedule_id, source, created_ms FROM limit_schedule WHERE id = 1',
    )
    .get();
  if (!head) return undefined;
  const slots = db
    .prepare<[], SlotRow>(
      'SELECT start_ms, end_ms, export_w, import_w, generation_w FROM limit_slots ORDER BY start_ms',
    )
    .all()
    .map((r) => ({
      startMs: r.start_ms,
      endMs: r.end_ms,
      exportW: r.export_w,
      importW: r.import_w,
      generationW: r.generation_w,
    }));
  return { scheduleId: head.schedule_id, source: head.source, createdMs: head.created_ms, slots };
}

/** Replaces the schedule whole, in one transaction. */
export function replaceLimitSchedule(db: Database, s: StoredLimitSchedule): void {
  writeTx(db, () => {
    db.prepare('DELETE FROM limit_schedule').run();
    db.prepare('DELETE FROM limit_slots').run();
    db.prepare('INSERT INTO limit_schedule (id, schedule_id, source, created_ms) VALUES (1, ?, ?, ?)').run(
      s.scheduleId,
      s.source,
      s.createdMs,
    );
    const ins = db.prepare(
      'INSERT INTO limit_slots (start_ms, end_ms, export_w, import_w, generation_w) VALUES (?, ?, ?, ?, ?)',
    );
    for (const x of s.slots) ins.run(x.startMs, x.endMs, x.exportW, x.importW, x.generationW);
  });
}

export function deleteLimitSchedule(db: Database): boolean {
  return writeTx(db, () => {
    db.prepare('DELETE FROM limit_slots').run();
    return db.prepare('DELETE FROM limit_schedule').run().changes > 0;
  });
}
