import { afterEach, describe, expect, it } from 'vitest';
import { type SimControl, startSimControl } from '../../src/demo/sim-control.js';
import { SimSite } from '../../src/sim/site.js';

let control: SimControl | undefined;
afterEach(async () => control?.close());

const post = (url: string, body: string) =>
  fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
const json = async (r: Response) => (await r.json()) as { relayClosed?: boolean; error?: string };

describe('simulator control endpoint', () => {
  it('opens and closes the grid relay of the running simulator', async () => {
    const sim = new SimSite(undefined, Date.parse('2026-06-21T20:00:00Z'));
    control = await startSimControl(sim);
    expect((await json(await fetch(`${control.url}/state`))).relayClosed).toBe(true);
    const open = await post(`${control.url}/grid-outage`, '{"on":true}');
    expect(open.status).toBe(200);
    expect((await json(open)).relayClosed).toBe(false);
    expect(sim.gridOutage).toBe(true);
    await post(`${control.url}/grid-outage`, '{"on":false}');
    expect(sim.gridOutage).toBe(false);
  });

  it('refuses bad bodies and unknown paths with a clear message and changes nothing', async () => {
    const sim = new SimSite(undefined, Date.parse('2026-06-21T20:00:00Z'));
    control = await startSimControl(sim);
    for (const body of ['', 'on', '{"on":"yes"}', '[]', 'null']) {
      const r = await post(`${control.url}/grid-outage`, body);
      expect(r.status, body).toBe(400);
      expect((await json(r)).error).toMatch(/on/);
    }
    expect((await post(`${control.url}/grid-outage`, 'x'.repeat(5000))).status).toBe(413);
    expect((await fetch(`${control.url}/nope`)).status).toBe(404);
    expect(sim.gridOutage).toBe(false);
  });
});
