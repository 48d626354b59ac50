/**
 * End to end through a YAML profile: the demo site with its grid meter replaced by the
 * simulator's Eastron SDM630 (float32 input registers, src/sim/sdm630.ts) and the site.yaml
 * device switched to `profile: eastron-sdm630`. History is pre-filled through the profile
 * engine, then the daemon polls the meter over real Modbus TCP; everything is checked through
 * the HTTP API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSimConfig } from '../../src/sim/config.js';
import { partnerToken } from '../support/auth.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';

const Q = 15 * 60 * 1000;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

interface Entry {
  interval: string;
  power_W?: number;
  state?: string;
  energy_Wh_increment?: number;
  energy_Wh_decrement?: number;
}

/** the SDM630 at the connection point, and batteries too small to carry the night, so the grid is both imported from and exported to */
function smallBatterySdm630() {
  const sim = defaultSimConfig();
  return {
    ...sim,
    gridMeter: 'sdm630' as const,
    battery: { ...sim.battery, blocks: sim.battery.blocks.map((b) => ({ ...b, capacityWh: 500 })) },
  };
}

describe('a grid meter read through the eastron-sdm630 profile', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let token: string;
  const grid = 'grid-meter__GRID_METER_DERIVED';
  const tel = async (q: string): Promise<Entry[]> => {
    const r = await getJson(`${demo.url}/api/v1/devices/${grid}/telemetry?${q}`, token);
    if (r.status !== 200) throw new Error(`telemetry: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.entries as Entry[];
  };

  beforeAll(async () => {
    demo = await demoSite({
      // a fixed summer day, noon in Berlin: the history reaches back into the night
      start: Date.parse('2026-06-21T10:00:00Z'),
      history: 'PT8H',
      speed: 120,
      sim: smallBatterySdm630(),
      configure: (config) => {
        const meter = config.devices.find((d) => d.id === 'grid-meter')!;
        meter.profile = 'eastron-sdm630';
      },
    });
    token = await partnerToken(demo.credentials);
  });
  afterAll(async () => demo?.cleanup());

  it('the meter is online with the identity the profile and the meter give', async () => {
    await waitFor('grid meter online over Modbus TCP', () => demo.daemon.site.devices.get('grid-meter')?.online);
    const r = await getJson(`${demo.url}/api/v1/devices`, token);
    expect(r.status).toBe(200);
    const meter = r.body.devices.find((d: { deviceId: string }) => d.deviceId === 'grid-meter');
    const simMeter = demo.sim.identities().find((d) => d.role === 'grid_meter')!;
    expect(meter).toMatchObject({ manufacturer: 'Eastron', model: 'SDM630', serial: simMeter.serial, online: true });
  });

  it('buckets carry power, the grid state and lifetime counters whose growth matches the mean power', async () => {
    const end = Math.floor(demo.prefilledUntil / Q) * Q;
    const start = end - 6 * 3_600_000;
    const entries = await tel(`interval=${iso(start)}/${iso(end)}&include=default,energy`);
    expect(entries).toHaveLength(24);
    let imported = 0;
    let exported = 0;
    entries.forEach((e, i) => {
      expect(e.state, e.interval).toBe('ok');
      expect(typeof e.power_W).toBe('number');
      expect(e.energy_Wh_increment).toBeGreaterThanOrEqual(0);
      expect(e.energy_Wh_decrement).toBeLessThanOrEqual(0);
      if (i === 0) return;
      const prev = entries[i - 1]!;
      const inWh = e.energy_Wh_increment! - prev.energy_Wh_increment!;
      const outWh = prev.energy_Wh_decrement! - e.energy_Wh_decrement!;
      expect(inWh, e.interval).toBeGreaterThanOrEqual(0);
      expect(outWh, e.interval).toBeGreaterThanOrEqual(0);
      imported += inWh;
      exported += outWh;
      // the meter's counters (kWh, import → increment) against its power (W, import positive)
      // over the quarter hour; f32 kWh registers resolve about 1 Wh at these totals
      const net = inWh - outWh;
      expect(Math.abs(net - e.power_W! / 4), `${e.interval}: net ${net} Wh, power ${e.power_W} W`).toBeLessThanOrEqual(
        Math.max(25, Math.abs(e.power_W! / 4) * 0.05),
      );
    });
    // the night is imported, the late morning exported: both directions were seen
    expect(imported).toBeGreaterThan(0);
    expect(exported).toBeGreaterThan(0);
    expect(entries.some((e) => e.power_W! < 0)).toBe(true);
  });

  it('a grid outage shows as not_present, from the meter read live over Modbus TCP', async () => {
    const since = demo.clock.now();
    demo.sim.setGridOutage(true);
    const entry = await waitFor(
      'a closed bucket with the outage',
      async () => (await tel(`interval=${iso(Math.floor(since / Q) * Q)}/PT2H`)).find((e) => e.state === 'not_present'),
      60_000,
    );
    expect(entry.power_W).toBeDefined();
    demo.sim.setGridOutage(false);
  });
});
