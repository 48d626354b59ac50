import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partnerToken } from '../support/auth.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';

const Q = 15 * 60 * 1000;

/**
 * One simulated day pre-filled through the real decoding and bucketing code, then live polling
 * over real Modbus TCP on a clock 60x faster than real time.
 */
describe('telemetry over a simulated day', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let token: string;
  let dayStart: number;
  let dayEnd: number;
  const tel = (id: string, q: string) =>
    getJson(`${demo.url}/api/v1/devices/${encodeURIComponent(id)}/telemetry?${q}`, token);
  const ids = () => {
    const s = demo.daemon.site;
    return {
      grid: s.streams().find((x) => x.id.endsWith('__GRID_METER_DERIVED'))!.id,
      pv: s.streams().find((x) => x.id.endsWith('__dcm'))!.id,
      battery: s.streams().find((x) => x.id.endsWith('__bb_agg'))!.id,
      house: s.streams().find((x) => x.deviceId === 'house-meter')!.id,
      inverter: s.streams().find((x) => x.deviceKind === 'inverter')!.id,
    };
  };

  beforeAll(async () => {
    // a fixed summer day, so the test sees the same sun every run: "now" is 03:00 local on
    // 21 June and the history reaches back past local midnight of 20 June
    demo = await demoSite({ speed: 60, history: 'P1DT4H', start: Date.parse('2026-06-21T01:00:00Z') });
    token = await partnerToken(demo.credentials);
    const tz = demo.daemon.site.config.site.timezone;
    const today = DateTime.fromMillis(demo.clock.now(), { zone: tz }).startOf('day');
    dayStart = today.minus({ days: 1 }).toMillis();
    dayEnd = today.toMillis();
    if (dayEnd > demo.prefilledUntil || dayStart < demo.clock.now() - 28 * 3_600_000)
      throw new Error('history did not cover the test day');
  });
  afterAll(async () => demo?.cleanup());

  const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

  it('PT15M: one entry per bucket, canonical UTC intervals, the stream kind on every entry', async () => {
    const { status, body } = await tel(ids().grid, `interval=${iso(dayStart)}/${iso(dayEnd)}`);
    expect(status).toBe(200);
    const n = (dayEnd - dayStart) / Q;
    expect(body.entries).toHaveLength(n);
    body.entries.forEach((e: Record<string, unknown>, i: number) => {
      expect(e.interval).toBe(`${iso(dayStart + i * Q)}/${iso(dayStart + (i + 1) * Q)}`);
      expect(e.deviceId).toBe(ids().grid);
      expect(e.deviceKind).toBe('meter');
      expect(e.kind).toBe('meter');
      expect(typeof e.power_W).toBe('number');
      expect(e.state).toBe('ok');
      expect(e.energy_Wh_increment).toBeUndefined(); // only with include=energy
    });
  });

  it('accepts start/end, start/duration and duration/end with the same result', async () => {
    const a = await tel(ids().pv, `interval=${iso(dayStart)}/${iso(dayStart + 4 * Q)}`);
    const b = await tel(ids().pv, `interval=${iso(dayStart)}/PT1H`);
    const c = await tel(ids().pv, `interval=PT1H/${iso(dayStart + 4 * Q)}`);
    const d = await tel(
      ids().pv,
      `interval=${encodeURIComponent(DateTime.fromMillis(dayStart, { zone: 'Europe/Berlin' }).toISO()!)}/PT1H`,
    );
    expect(a.status).toBe(200);
    expect(a.body.entries).toHaveLength(4);
    expect(b.body).toEqual(a.body);
    expect(c.body).toEqual(a.body);
    expect(d.body).toEqual(a.body); // an explicit offset is converted to UTC
  });

  it('PT1H and P1D roll up the 15-minute buckets (time-weighted power, last SoC, counters at the end)', async () => {
    const q = `interval=${iso(dayStart)}/${iso(dayEnd)}&include=default,energy`;
    const m15 = (await tel(ids().battery, q)).body.entries;
    const h = (await tel(ids().battery, `${q}&resolution=PT1H`)).body.entries;
    const d = (await tel(ids().battery, `${q}&resolution=P1D`)).body.entries;
    expect(h).toHaveLength((dayEnd - dayStart) / 3_600_000);
    expect(d).toHaveLength(1);
    expect(d[0].interval).toBe(`${iso(dayStart)}/${iso(dayEnd)}`);
    const mean = m15.slice(0, 4).reduce((s: number, e: { power_W: number }) => s + e.power_W, 0) / 4;
    expect(h[0].power_W).toBeCloseTo(mean, 0);
    expect(h[0].soc).toBe(m15[3].soc);
    expect(d[0].soc).toBe(m15.at(-1).soc);
    expect(d[0].energy_Wh_increment).toBe(m15.at(-1).energy_Wh_increment);
    expect(d[0].energy_Wh_decrement).toBe(m15.at(-1).energy_Wh_decrement);
  });

  it('energy balance over the day closes within 2 % (AC bus, DC bus and the whole site)', async () => {
    const q = `interval=${iso(dayStart)}/${iso(dayEnd)}&resolution=PT15M&include=default,energy`;
    const get = async (id: string) => (await tel(id, q)).body.entries as Record<string, number>[];
    const { grid, pv, battery, house, inverter } = ids();
    const [g, p, b, hs, inv] = await Promise.all([get(grid), get(pv), get(battery), get(house), get(inverter)]);
    for (const s of [g, p, b, hs, inv]) expect(s).toHaveLength(96);
    // energy of a power channel over the day from the bucket means (each bucket a quarter hour)
    const wh = (rows: Record<string, number>[], ch: string) => rows.reduce((s, r) => s + r[ch]! * 0.25, 0);
    const delta = (rows: Record<string, number>[], ch: string) => rows.at(-1)![ch]! - rows[0]![ch]!;

    const gridNet = wh(g, 'power_W'); // + import
    const pvOut = -wh(p, 'power_W'); // produced
    const battIn = wh(b, 'power_W'); // + charging
    const load = wh(hs, 'power_W');
    const invAcIn = wh(inv, 'power_AC_W'); // − delivering
    const invDcIn = wh(inv, 'power_DC_W');
    // each balance within 2 % of the flow it accounts for
    // AC bus: grid + inverter output = house
    expect(Math.abs(gridNet - invAcIn - load)).toBeLessThan(0.02 * load);
    // DC bus: PV and battery discharge feed the inverter's DC side
    expect(Math.abs(pvOut - battIn - invDcIn)).toBeLessThan(0.02 * pvOut);
    // whole site: what came in (grid, PV) went to the house, the battery or conversion losses
    const losses = invDcIn + invAcIn;
    expect(losses).toBeGreaterThan(0);
    const sources = pvOut + Math.max(gridNet, 0) + Math.max(-battIn, 0);
    expect(Math.abs(gridNet + pvOut - battIn - load - losses)).toBeLessThan(0.02 * sources);
    expect(pvOut).toBeGreaterThan(0);
    // lifetime counters agree with the integrated power (grid from the meter's own registers)
    const gridCounters = delta(g, 'energy_Wh_increment') + delta(g, 'energy_Wh_decrement');
    expect(Math.abs(gridCounters - gridNet)).toBeLessThan(
      0.02 * (delta(g, 'energy_Wh_increment') - delta(g, 'energy_Wh_decrement')),
    );
  });

  it('savings for the day, and the battery’s part of them, equal the sums worked out here from the served buckets and the demo tariff', async () => {
    const q = `interval=${iso(dayStart)}/${iso(dayEnd)}`;
    const { grid, house, battery } = ids();
    const entries = async (id: string) => (await tel(id, q)).body.entries as { interval: string; power_W: number }[];
    const [g, h, b] = await Promise.all([entries(grid), entries(house), entries(battery)]);
    const batteryW = new Map(b.map((x) => [x.interval, x.power_W]));
    // demo tariff: 0.36 €/kWh 07:00-22:00 local, 0.26 otherwise, export 0.08
    let expected = 0;
    // the battery's part: the grid without it (grid power less battery power, + charging) at the same prices
    let expectedBattery = 0;
    g.forEach((gb, i) => {
      const localHour = DateTime.fromISO(gb.interval.split('/')[0]!, { zone: 'Europe/Berlin' }).hour;
      const imp = localHour >= 7 && localHour < 22 ? 0.36 : 0.26;
      const gridKWh = (gb.power_W * 0.25) / 1000;
      const houseKWh = (h[i]!.power_W * 0.25) / 1000;
      const cost = (kWh: number) => (kWh >= 0 ? kWh * imp : kWh * 0.08);
      const withSystem = cost(gridKWh);
      expected += houseKWh * imp - withSystem;
      expectedBattery += cost(((gb.power_W - batteryW.get(gb.interval)!) * 0.25) / 1000) - withSystem;
    });
    const r = await getJson(`${demo.url}/api/v2/sites/${demo.siteId}/savings?${q}&resolution=P1D`, token);
    expect(r.status).toBe(200);
    expect(r.body.entries).toHaveLength(1);
    expect(r.body.entries[0].interval).toBe(`${iso(dayStart)}/${iso(dayEnd)}`);
    expect(r.body.entries[0].savings).toBeCloseTo(expected, 2);
    expect(expected).toBeGreaterThan(0); // a sunny June day with a battery saves money
    expect(b).toHaveLength(g.length);
    expect(r.body.entries[0].batterySavings).toBeCloseTo(expectedBattery, 2);
    expect(r.body.skipped.batteryNotCounted).toBe(0);
    // in self-consumption the battery stores PV that would go out at 0.08 for the night's 0.26
    expect(expectedBattery).toBeGreaterThan(0);
    expect(expectedBattery).toBeLessThan(expected);
  });

  it('SoC stays within the battery limits in every bucket', async () => {
    const { body } = await tel(ids().battery, `interval=${iso(dayStart)}/${iso(dayEnd)}`);
    const blocks = demo.sim.model.config.battery.blocks;
    const min = Math.min(...blocks.map((x) => x.socMinPct));
    const max = Math.max(...blocks.map((x) => x.socMaxPct));
    for (const e of body.entries) {
      expect(e.soc).toBeGreaterThanOrEqual(min - 0.05);
      expect(e.soc).toBeLessThanOrEqual(max + 0.05);
    }
  });

  it('an id with no stream answers 200 with no entries', async () => {
    const r = await tel('no-such-sensor', `interval=${iso(dayStart)}/PT1H`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ entries: [] });
    // a bare device id whose streams carry a suffix is such an id too
    const bare = await tel('grid-meter', `interval=${iso(dayStart)}/PT1H`);
    expect(bare.body).toEqual({ entries: [] });
  });

  it('live polling over Modbus closes new buckets on the accelerated clock', async () => {
    const from = Math.floor(demo.clock.now() / Q) * Q;
    await waitFor(
      'a live bucket',
      async () => {
        const r = await tel(ids().grid, `interval=${iso(from)}/PT1H`);
        return r.body.entries.length > 0 ? r.body.entries : undefined;
      },
      40_000,
    );
  });
});
