/**
 * The 7-day pages of GET /api/v1/dynamicTariffs/{tariffId} (docs/api.md, that section). A value
 * belongs to the page whose window holds its start, and windows of one walk are adjacent and
 * disjoint, so a walk returns every value once.
 *
 * - no interval: the first window ends after the quarter hour in progress on the daemon clock
 *   (the price in force now is on it) and reaches back 7 days; the walk goes on while older
 *   values are stored.
 * - interval [S, E): the first window is the latest 7 days inside it, the next 7 days earlier
 *   each, the last one cut at S; the walk goes on until S is reached even where nothing is
 *   stored (docs/api.md "Dynamic tariff pages": each nextToken moves back 7 days until interval.start).
 */
import type { Database } from 'better-sqlite3';
import { anyValueStartingIn, type TariffValue, valuesStartingIn } from '../store/tariffs.js';
import { BUCKET_MS, floorToBucket } from '../telemetry/align.js';
import type { TimeRange } from '../telemetry/interval.js';

export const PAGE_MS = 7 * 86_400_000;
/** the earliest instant a Date can hold: "no floor" */
const BEGINNING = -8.64e15;

/** Where a page ends and where the walk stops. */
export interface PageCursor {
  /** ms, exclusive */
  end: number;
  /** ms, inclusive: interval.start, or null for the whole stored history */
  floor: number | null;
}

export interface Page {
  window: TimeRange;
  values: TariffValue[];
  next: PageCursor | null;
}

export function firstCursor(now: number, interval?: TimeRange): PageCursor {
  if (interval) return { end: interval.end, floor: interval.start };
  return { end: floorToBucket(now) + BUCKET_MS, floor: null };
}

export function readPage(db: Database, tariffId: string, cursor: PageCursor): Page {
  const floor = cursor.floor ?? BEGINNING;
  const start = Math.max(floor, cursor.end - PAGE_MS);
  const window = { start, end: cursor.end };
  const values = start < cursor.end ? valuesStartingIn(db, tariffId, start, cursor.end) : [];
  const more = cursor.floor !== null ? start > cursor.floor : anyValueStartingIn(db, tariffId, floor, start);
  return { window, values, next: more ? { end: start, floor: cursor.floor } : null };
}
