/**
 * The telemetry endpoint answers a repeated read from its cache (src/telemetry/answer-cache.ts)
 * and reads again once a bucket was written: a partner polling today never sees a stale day.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { partnerToken } from '../support/auth.js';
import { demoSite, waitFor } from '../support/demo.js';

let demo: Awaited<ReturnType<typeof demoSite>>;
let token: string;
beforeAll(async () => {
  demo = await demoSite({ speed: 60, history: 'PT2H' });
  token = await partnerToken(demo.credentials);
});
afterAll(async () => demo?.cleanup());

const read = async (url: string) => {
  const r = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
  return r.text();
};

it('answers the same bytes while no bucket was written, and the new bucket once one was', async () => {
  const grid = demo.daemon.site.streams().find((s) => s.id.endsWith('__GRID_METER_DERIVED'));
  if (!grid) throw new Error('the demo site has no grid stream');
  const now = demo.clock.now();
  const interval = `${new Date(now - 6 * 3_600_000).toISOString()}/${new Date(now + 6 * 3_600_000).toISOString()}`;
  const url = `${demo.url}/api/v1/devices/${encodeURIComponent(grid.id)}/telemetry?interval=${interval}`;
  const first = await read(url);
  const count = (body: string) => (JSON.parse(body) as { entries: unknown[] }).entries.length;
  expect(count(first)).toBeGreaterThan(0);
  // the next bucket close (15 simulated minutes, 15 s here) adds an entry to the same answer
  const later = await waitFor(
    'the answer with the next bucket',
    async () => {
      const body = await read(url);
      return count(body) > count(first) && body;
    },
    60_000,
  );
  expect(JSON.parse(later).entries.slice(0, count(first))).toEqual(JSON.parse(first).entries);
  // a later read never goes back to the cached day without the new bucket
  expect(count(await read(url))).toBeGreaterThanOrEqual(count(later));
});
