import type { ConsumerStore, Gap, Hole } from './store.js';

const Q = 15 * 60_000;
const DAY = 86_400_000;
/** src/uplink/resync.ts MAX_RESYNC_DAYS: the gateway refuses a longer interval */
const MAX_DAYS = 31;

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/**
 * The resync interval for a hole, from the `time` of the messages on either side. A telemetry
 * message's time is its bucket's start and it is written when the bucket closes, about 15
 * minutes later (up to a minute after the boundary); other messages carry the time they were
 * written, a grid event the first reading of the change, a little before. So a bucket lost in
 * the hole starts no earlier than half an hour before the earlier neighbour's time and no later
 * than the later one's, and a grid event lost in it is stamped before the later neighbour was
 * written: when that is telemetry, up to a minute past its bucket's end, so the interval ends a
 * quarter after that end. Asking for a little more costs a few repeated buckets and events,
 * which the upserts absorb; asking for less would lose one. At most 31 days, ending at the later side.
 */
export function holeInterval(g: Pick<Gap, 'beforeTime' | 'afterTime'>): string {
  const lo = Math.floor(Math.min(g.beforeTime, g.afterTime) / Q) * Q - 2 * Q;
  const hi = Math.floor(Math.max(g.beforeTime, g.afterTime) / Q) * Q + 2 * Q;
  return `${iso(Math.max(lo, hi - MAX_DAYS * DAY))}/${iso(hi)}`;
}

export interface GapPolicy {
  /** how long a hole may stay open before a resync is asked for (messages of one site can arrive out of order, e.g. at two instances), ms */
  waitMs: number;
  /** how long a request may go unanswered, or an accepted one unfilled, before it is asked again, ms */
  retryMs: number;
}

export type ResyncSender = (prefix: string, requestId: string, interval: string) => void;

/**
 * One pass over the ledger: records new holes, closes those whose seqs came after all or whose
 * resync arrived in full, and asks (again) for those that are due. Returns what it did.
 */
export async function scanGaps(
  store: ConsumerStore,
  policy: GapPolicy,
  send: ResyncSender,
  now: number,
): Promise<{ found: number; requested: number; closed: number }> {
  const gaps = await store.gaps();
  const holes = await store.openHoles();
  let found = 0;
  let requested = 0;
  let closed = 0;
  const overlaps = (h: Hole, g: Gap) => h.siteId === g.siteId && g.fromSeq <= h.toSeq && g.toSeq >= h.fromSeq;
  for (const g of gaps) {
    if (holes.some((h) => overlaps(h, g))) continue;
    const id = await store.addHole(g, holeInterval(g), now);
    holes.push({
      id,
      siteId: g.siteId,
      prefix: '',
      fromSeq: g.fromSeq,
      toSeq: g.toSeq,
      interval: holeInterval(g),
      detectedAt: now,
      requestId: null,
      requestedAt: null,
      attempts: 0,
      firstSeq: null,
      lastSeq: null,
      status: 'open',
      closedAt: null,
      filledSeqs: null,
    });
    found++;
  }
  // the gateway keeps no resync request that comes while it is away (clean session)
  const offline = await store.offlineSites();
  for (const h of await store.openHoles()) {
    if (!gaps.some((g) => overlaps(h, g))) {
      await store.closeHole(h, 'arrived', now);
      closed++;
      continue;
    }
    if (
      h.status === 'accepted' &&
      (h.firstSeq === null || h.lastSeq === null || (await store.covered(h.siteId, h.firstSeq, h.lastSeq)))
    ) {
      await store.closeHole(h, 'filled', now);
      closed++;
      continue;
    }
    const due =
      h.status === 'open' ? now - h.detectedAt >= policy.waitMs : now - (h.requestedAt ?? 0) >= policy.retryMs;
    if (!due || offline.has(h.siteId)) continue;
    const requestId = `gap-${h.id}-${h.attempts + 1}`;
    if (!(await store.claim(h.id, h.attempts, requestId, now))) continue;
    send(h.prefix, requestId, h.interval);
    requested++;
  }
  return { found, requested, closed };
}
