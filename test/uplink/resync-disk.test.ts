/**
 * A resync on a data disk that refuses writes (`query_only` on a real database: SQLITE_READONLY,
 * a storage fault): the outbox lives on that disk, so the request is answered by name,
 * STORAGE_UNAVAILABLE with its requestId, as HTTP's 503 is; never INTERNAL_ERROR without one.
 * Once writes work, the same request is queued. What the feature publishes is this answer.
 */
import { describe, expect, it } from 'vitest';
import { writeTx } from '../../src/store/db.js';
import { enqueue, outboxStats } from '../../src/store/outbox.js';
import { payloadContext } from '../../src/uplink/payloads.js';
import { answerResync, type ResyncTarget } from '../../src/uplink/resync.js';
import { fixture, GRID, siteConfig } from '../tariffs/fixture.js';

const command = (body: unknown) => Buffer.from(JSON.stringify(body));
const ask = { requestId: 'gap-1', interval: '2026-11-20T10:00:00Z/2026-11-20T11:00:00Z' };

function target(outboxMaxBytes = 1_000_000): ResyncTarget & { put: (iso: string) => void } {
  const f = fixture(siteConfig());
  const ctx = payloadContext(f.site, 'percent');
  return {
    db: f.db,
    site: f.site,
    ctx,
    outboxMaxBytes,
    enqueue: (messages) => writeTx(f.db, () => enqueue(f.db, messages, Date.parse('2026-11-21T00:00:00Z'))),
    put: (iso) => f.put(GRID, iso, 100),
  };
}

describe('a resync', () => {
  it('on a disk that refuses writes: STORAGE_UNAVAILABLE with its requestId, nothing queued; queued once writes work', () => {
    const t = target();
    t.put('2026-11-20T10:00:00Z');
    t.put('2026-11-20T10:15:00Z');
    t.db.pragma('query_only = ON');
    const refused = answerResync(t, command(ask));
    expect(refused).toMatchObject({ requestId: 'gap-1', status: 'error', code: 'STORAGE_UNAVAILABLE' });
    expect(refused.status === 'error' ? refused.message : '').toMatch(/data disk takes no writes/);
    t.db.pragma('query_only = OFF');
    expect(outboxStats(t.db).depth).toBe(0);
    const accepted = answerResync(t, command(ask));
    expect(accepted).toMatchObject({ requestId: 'gap-1', status: 'accepted', buckets: 2, gridEvents: 0 });
    expect(outboxStats(t.db).depth).toBe(accepted.status === 'accepted' ? accepted.messages : -1);
  });

  it('a bad request and a full outbox are answered by name; nothing is thrown', () => {
    const t = target(10);
    t.put('2026-11-20T10:00:00Z');
    expect(answerResync(t, Buffer.from('{'))).toMatchObject({ status: 'error', code: 'INVALID_PAYLOAD' });
    expect(answerResync(t, command({ ...ask, interval: 'yesterday' }))).toMatchObject({
      requestId: 'gap-1',
      status: 'error',
      code: 'INVALID_INTERVAL',
    });
    expect(answerResync(t, command(ask))).toMatchObject({ requestId: 'gap-1', status: 'error', code: 'OUTBOX_FULL' });
  });
});
