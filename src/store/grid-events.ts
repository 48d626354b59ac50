import type { Database } from 'better-sqlite3';
import type { GridState } from '../core/channels.js';
import type { GridEvent } from '../core/events.js';

/** Rows are keyed by the meter's device id; the stream id follows from the site's configuration. */
export type StoredGridEvent = Omit<GridEvent, 'streamId'>;

/**
 * Grid relay states as they were established: each announced change, and the first state ever
 * seen (a baseline, `announced` false). The newest per meter is the state a restart resumes from.
 */
export function insertGridEvent(db: Database, e: StoredGridEvent, announced = true): void {
  db.prepare('INSERT INTO grid_events (device_id, ts, state, announced) VALUES (?, ?, ?, ?)').run(
    e.deviceId,
    e.timestamp,
    e.state,
    announced ? 1 : 0,
  );
}

export function lastGridState(db: Database, deviceId: string): GridState | null {
  const row = db
    .prepare('SELECT state FROM grid_events WHERE device_id = ? ORDER BY ts DESC, id DESC LIMIT 1')
    .pluck()
    .get(deviceId) as GridState | undefined;
  return row ?? null;
}

export function recentGridEvents(db: Database, limit: number): StoredGridEvent[] {
  const rows = db
    .prepare('SELECT device_id, ts, state FROM grid_events WHERE announced = 1 ORDER BY ts DESC, id DESC LIMIT ?')
    .raw()
    .all(limit) as [string, number, GridState][];
  return rows.map(([deviceId, timestamp, state]) => ({ deviceId, timestamp, state }));
}

/**
 * The announced events with a timestamp in [start, end), oldest first: what the uplink published
 * when they happened, for a resync to send again (a baseline was never published).
 */
export function announcedGridEvents(db: Database, start: number, end: number): StoredGridEvent[] {
  const rows = db
    .prepare('SELECT device_id, ts, state FROM grid_events WHERE announced = 1 AND ts >= ? AND ts < ? ORDER BY ts, id')
    .raw()
    .all(start, end) as [string, number, GridState][];
  return rows.map(([deviceId, timestamp, state]) => ({ deviceId, timestamp, state }));
}
