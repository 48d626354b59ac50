import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partnerToken } from '../support/auth.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';

const Q = 15 * 60 * 1000;
const iso = (ms: number) => new Date(ms).toISOString();

describe('lifetime counters across a daemon restart', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let token: string;
  beforeAll(async () => {
    demo = await demoSite({ speed: 120, history: 'PT6H' });
    token = await partnerToken(demo.credentials);
  });
  afterAll(async () => demo?.cleanup());

  async function counters(): Promise<Map<string, { inc: number[]; dec: number[]; last: number }>> {
    const out = new Map<string, { inc: number[]; dec: number[]; last: number }>();
    const from = iso(demo.clock.now() - 8 * 3_600_000);
    for (const s of demo.daemon.site.streams()) {
      const { body } = await getJson(
        `${demo.url}/api/v1/devices/${encodeURIComponent(s.id)}/telemetry?interval=${from}/PT12H&include=energy`,
        token,
      );
      const e = body.entries as { interval: string; energy_Wh_increment?: number; energy_Wh_decrement?: number }[];
      out.set(s.id, {
        inc: e.map((x) => x.energy_Wh_increment!).filter((x) => x !== undefined),
        dec: e.map((x) => x.energy_Wh_decrement!).filter((x) => x !== undefined),
        last: e.length ? Date.parse(e.at(-1)!.interval.split('/')[0]!) : 0,
      });
    }
    return out;
  }

  it('continue from where they were and never decrease', async () => {
    const before = await counters();
    const lastBefore = Math.max(...[...before.values()].map((c) => c.last));
    await demo.restartDaemon();
    await waitFor(
      'two buckets closed after the restart',
      async () => {
        const c = await counters();
        return Math.max(...[...c.values()].map((x) => x.last)) >= lastBefore + 2 * Q ? true : undefined;
      },
      40_000,
    );
    const after = await counters();
    let checked = 0;
    for (const [id, a] of after) {
      const b = before.get(id)!;
      expect(a.inc.length, id).toBeGreaterThan(b.inc.length);
      for (let i = 1; i < a.inc.length; i++)
        expect(a.inc[i]!, `${id} increment at ${i}`).toBeGreaterThanOrEqual(a.inc[i - 1]!);
      for (let i = 1; i < a.dec.length; i++)
        expect(a.dec[i]!, `${id} decrement at ${i}`).toBeLessThanOrEqual(a.dec[i - 1]!);
      for (const v of a.inc) expect(v).toBeGreaterThanOrEqual(0);
      for (const v of a.dec) expect(v).toBeLessThanOrEqual(0);
      // what was stored before the restart is unchanged
      expect(a.inc.slice(0, b.inc.length)).toEqual(b.inc);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(5);
  });
});
