/**
 * What a resync sends again, from the gateway's own database: the buckets that start in the
 * interval and the grid events stamped in it, each marked with the request id. A grid event
 * that a consumer lost in a hole is stored only here, so the resync is its one way back.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { GridState } from '../../src/core/channels.js';
import { EventBus } from '../../src/core/events.js';
import { GridFeature } from '../../src/grid/feature.js';
import { gridEventBody, payloadContext } from '../../src/uplink/payloads.js';
import { parseResync, resyncBodies } from '../../src/uplink/resync.js';
import { loadContract } from '../support/contract.js';
import { fixture, GRID, ms, siteConfig } from '../tariffs/fixture.js';

const PREFIX = 'sitegw/home';

function gateway() {
  const f = fixture(siteConfig());
  const log = pino({ level: 'silent' });
  const bus = new EventBus(log);
  new GridFeature({ site: f.site, db: f.db, bus: bus.as('grid'), log, debounce: 1 }).start();
  const ctx = payloadContext(f.site, 'percent');
  // what the uplink published live for each announced event
  const live: string[] = [];
  bus.on('gridEvent', (e) => void live.push(gridEventBody(ctx, e).body));
  const read = (iso: string, state: GridState) =>
    bus.emit('reading', { streamId: GRID, ts: ms(iso), values: { state } });
  const resync = (requestId: string, interval: string) =>
    resyncBodies(f.db, f.site, ctx, parseResync(Buffer.from(JSON.stringify({ requestId, interval }))));
  return { ...f, live, read, resync };
}

describe('resync', () => {
  it('sends the grid events stamped in the interval again, marked with the request id; none outside it', () => {
    const g = gateway();
    g.put(GRID, '2026-11-20T10:00:00Z', 100);
    g.put(GRID, '2026-11-20T10:15:00Z', 200);
    g.put(GRID, '2026-11-20T10:45:00Z', 300);
    g.read('2026-11-20T09:50:00Z', 'ok'); // the baseline: stored, never published
    g.read('2026-11-20T09:58:00Z', 'not_present');
    g.read('2026-11-20T10:40:00Z', 'ok');
    expect(g.live).toHaveLength(2);

    // the interval starts mid-bucket: buckets are whole (10:00 on), events are those stamped in it
    const r = g.resync('gap-7-1', '2026-11-20T09:55:00Z/2026-11-20T10:30:00Z');
    expect(r).toMatchObject({ buckets: 2, gridEvents: 1 });
    const bodies = r.messages.map((m) => ({ topic: m.topic, ...JSON.parse(m.body) }));
    expect(bodies.map((b) => [b.topic, b.time, b.resync])).toEqual([
      ['grid-events', '2026-11-20T09:58:00Z', 'gap-7-1'],
      ['telemetry', '2026-11-20T10:00:00Z', 'gap-7-1'],
      ['telemetry', '2026-11-20T10:15:00Z', 'gap-7-1'],
    ]);
    // the event as it went out live, plus the mark
    const { topic: _t, ...event } = bodies[0]!;
    expect(event).toEqual({ ...JSON.parse(g.live[0]!), resync: 'gap-7-1' });
    expect(loadContract(PREFIX).check(`${PREFIX}/grid-events`, { seq: 1, ...event })).toEqual([]);

    // the later event, the bucket after it; nothing of 09:55..10:30 again
    const later = g.resync('r-2', '2026-11-20T10:30:00Z/2026-11-20T11:00:00Z');
    expect(later).toMatchObject({ buckets: 1, gridEvents: 1 });
    expect(later.messages.map((m) => JSON.parse(m.body)).map((b) => [b.time, b.state ?? null])).toEqual([
      ['2026-11-20T10:40:00Z', 'ok'],
      ['2026-11-20T10:45:00Z', null],
    ]);
  });

  it('sends no grid event for an interval without one, and never the baseline', () => {
    const g = gateway();
    g.read('2026-11-20T09:50:00Z', 'ok');
    expect(g.resync('r-3', '2026-11-20T09:45:00Z/2026-11-20T10:00:00Z')).toEqual({
      messages: [],
      buckets: 0,
      gridEvents: 0,
    });
  });
});
