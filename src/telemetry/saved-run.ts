/**
 * The bucket in progress of a stream as a clean stop saves it (store/open-buckets.ts) and a start
 * reads it back: checked field by field, since it is JSON from the disk.
 */
import { LAST_CHANNELS, POWER_CHANNELS } from '../core/channels.js';
import { BUCKET_MS } from './align.js';
import type { LastValues, OpenBucket } from './bucketer.js';

const NPOWER = POWER_CHANNELS.length;

/** What a clean stop keeps of a stream's bucket in progress (JSON has no -Infinity: null stands for it). */
export interface SavedRun {
  open: OpenBucket;
  heldValue: number[];
  heldAt: number[];
  lastTs: number;
  cursor: number;
}

const finiteOr = (v: unknown, fallback: number): number | null =>
  v === null ? fallback : typeof v === 'number' && Number.isFinite(v) ? v : null;

/** A saved run read back, or null when anything in it is not what saveRun() wrote. */
export function restoredRun(x: unknown): SavedRun | null {
  if (typeof x !== 'object' || x === null) return null;
  const r = x as Record<string, unknown>;
  const o = r.open as Record<string, unknown> | undefined;
  if (!o || typeof o !== 'object') return null;
  const nums = (a: unknown, fallback: number): number[] | null => {
    if (!Array.isArray(a) || a.length !== NPOWER) return null;
    const out = a.map((v) => finiteOr(v, fallback));
    return out.every((v): v is number => v !== null) ? out : null;
  };
  const sum = nums(o.sum, 0);
  const cov = nums(o.cov, 0);
  const heldValue = nums(r.heldValue, 0);
  const heldAt = nums(r.heldAt, -Infinity);
  const lastTs = finiteOr(r.lastTs, -Infinity);
  const cursor = finiteOr(r.cursor, -Infinity);
  const start = finiteOr(o.start, NaN);
  const end = finiteOr(o.end, NaN);
  if (
    !sum ||
    !cov ||
    !heldValue ||
    !heldAt ||
    lastTs === null ||
    cursor === null ||
    start === null ||
    end === null ||
    end - start !== BUCKET_MS
  )
    return null;
  const opt = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    open: {
      start,
      end,
      samples: opt(o.samples) ?? 0,
      coveredMs: opt(o.coveredMs) ?? 0,
      sum,
      cov,
      ...(Object.fromEntries(
        LAST_CHANNELS.map((c) => {
          const v = o[c.id];
          return [c.id, c.value === 'state' ? (typeof v === 'string' ? v : null) : opt(v)];
        }),
      ) as LastValues),
    },
    heldValue,
    heldAt,
    lastTs,
    cursor,
  };
}
