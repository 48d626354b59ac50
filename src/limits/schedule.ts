/**
 * The limit schedule (docs/limits.md "The schedule"): slots `{interval, exportW?, importW?,
 * generationW?}` at any whole second (a grid operator's controls are not on quarter hours), at
 * most 7 days ahead, none overlapping, replacing the schedule whole. These functions are the one
 * way in: the HTTP API, the uplink's cmd/limits and tests write through them.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { sortedWithoutOverlap } from '../control/plan-body.js';
import { ApiError, apiError } from '../core/errors.js';
import {
  deleteLimitSchedule,
  limitScheduleOf,
  replaceLimitSchedule,
  type StoredLimitSchedule,
  type StoredLimitSlot,
} from '../store/limits.js';
import { parseInterval } from '../telemetry/interval.js';
import { LIMIT_NAMES, type LimitSource, type LimitValues } from './sources.js';

export const LIMIT_HORIZON_MS = 7 * 86_400_000;
/** a slot a second long for 7 days */
export const MAX_LIMIT_SLOTS = 2016;
/** the largest limit a slot takes, W */
export const MAX_LIMIT_W = 10_000_000;

export interface LimitSlotBody {
  interval: string;
  exportW?: number;
  importW?: number;
  generationW?: number;
}

export const scheduleEtag = (scheduleId: string) => `"${scheduleId}"`;

/** The body's slots, sorted, as the store keeps them; a named 400 for the first rule broken. */
export function checkLimitSlots(slots: readonly LimitSlotBody[], now: number): StoredLimitSlot[] {
  if (!Array.isArray(slots)) throw apiError('INVALID_BODY', 'slots must be an array');
  if (slots.length > MAX_LIMIT_SLOTS) throw apiError('INVALID_BODY', `at most ${MAX_LIMIT_SLOTS} slots`);
  const out: StoredLimitSlot[] = slots.map((s, i) => {
    const at = `slots[${i}]`;
    let range: { start: number; end: number };
    try {
      range = parseInterval(String(s?.interval));
    } catch (err) {
      throw new ApiError(400, 'SLOT_INVALID', `${at}.interval: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (range.start % 1000 !== 0 || range.end % 1000 !== 0)
      throw apiError('SLOT_NOT_ALIGNED', `${at}.interval "${s.interval}" must start and end on a whole second`);
    if (range.end <= now) throw apiError('SLOT_IN_PAST', `${at}.interval "${s.interval}" has already ended`);
    if (range.end > now + LIMIT_HORIZON_MS)
      throw apiError('SLOT_TOO_FAR', `${at}.interval "${s.interval}" ends more than 7 days ahead`);
    const w: Record<string, number | null> = {};
    for (const name of LIMIT_NAMES) {
      const v = s[name];
      if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_LIMIT_W))
        throw apiError('SLOT_INVALID', `${at}.${name} must be whole watts between 0 and ${MAX_LIMIT_W}`);
      w[name] = v ?? null;
    }
    if (LIMIT_NAMES.every((n) => w[n] === null))
      throw apiError('LIMIT_REQUIRED', `${at} names no limit: give exportW, importW or generationW`);
    return {
      startMs: range.start,
      endMs: range.end,
      exportW: w.exportW ?? null,
      importW: w.importW ?? null,
      generationW: w.generationW ?? null,
    };
  });
  return sortedWithoutOverlap(out);
}

/** Stores the schedule whole (`ifMatch`: the ETag the writer read; `*` or absent: any). */
export function putLimitSchedule(
  db: Database,
  slots: readonly LimitSlotBody[],
  source: string,
  now: number,
  ifMatch?: string,
): StoredLimitSchedule {
  const checked = checkLimitSlots(slots, now);
  const before = limitScheduleOf(db);
  if (ifMatch !== undefined && ifMatch !== '*' && (!before || scheduleEtag(before.scheduleId) !== ifMatch.trim()))
    throw apiError(
      'LIMITS_CHANGED',
      `If-Match ${ifMatch.slice(0, 80)} is not the stored schedule's ETag: GET it again`,
    );
  const s = { scheduleId: randomUUID(), source, createdMs: now, slots: checked };
  replaceLimitSchedule(db, s);
  changed(db);
  return s;
}

/**
 * Each database's count of schedule writes through this module, so the source reads a new schedule
 * at once instead of serving its cached copy for up to a second (an answer that said "stored" then
 * a GET that did not show it in force).
 */
const writes = new WeakMap<Database, number>();
const changed = (db: Database) => writes.set(db, (writes.get(db) ?? 0) + 1);

export const getLimitSchedule = (db: Database): StoredLimitSchedule | undefined => limitScheduleOf(db);
/** Removes the schedule; false when there was none. */
export function removeLimitSchedule(db: Database): boolean {
  const removed = deleteLimitSchedule(db);
  changed(db);
  return removed;
}

/** The limits of the slot running at `now`. */
export function scheduleAt(slots: readonly StoredLimitSlot[], now: number): LimitValues {
  const s = slots.find((x) => x.startMs <= now && now < x.endMs);
  if (!s) return {};
  const out: LimitValues = {};
  for (const n of LIMIT_NAMES) if (s[n] !== null) out[n] = s[n];
  return out;
}

/** The most restrictive limits of the slots that overlap [start, end). */
export function scheduleOver(slots: readonly StoredLimitSlot[], start: number, end: number): LimitValues {
  const out: LimitValues = {};
  for (const s of slots) {
    if (s.endMs <= start || s.startMs >= end) continue;
    for (const n of LIMIT_NAMES) {
      const w = s[n];
      if (w !== null && !(w >= (out[n] ?? Number.POSITIVE_INFINITY))) out[n] = w;
    }
  }
  return out;
}

/**
 * The schedule as a source. Read from the store at most once a second, and at once after a write
 * through the functions above: the store is not asked at every reading.
 */
export function scheduleSource(db: Database): LimitSource {
  let cache: { at: number; writes: number; slots: readonly StoredLimitSlot[] } | null = null;
  const slotsAt = (now: number): readonly StoredLimitSlot[] => {
    const w = writes.get(db) ?? 0;
    if (!cache || cache.writes !== w || Math.abs(now - cache.at) >= 1000) {
      let slots: readonly StoredLimitSlot[] = cache?.slots ?? [];
      try {
        slots = limitScheduleOf(db)?.slots ?? [];
      } catch {
        // a disk that refuses the read keeps the schedule last read: limits never loosen on a fault
      }
      cache = { at: now, writes: w, slots };
    }
    return cache.slots;
  };
  return {
    name: 'schedule',
    at: (now) => scheduleAt(slotsAt(now), now),
    // a plan asks once per slot: the schedule read at the span's start (or the last read within a second)
    over: (start, end) => scheduleOver(slotsAt(cache?.at ?? start), start, end),
  };
}
