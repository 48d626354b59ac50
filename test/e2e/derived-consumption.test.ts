/**
 * The demo site minus its house meter: the gateway derives the house consumption from the grid
 * meter and the inverter (`__CONSUMPTION_METER_DERIVED`). Two gateways poll two identical
 * simulators (same seed, same clock origin) over real Modbus TCP, one with the house meter and
 * one without; the derived stream must account for the same energy as the metered one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TopoNode } from '../../src/site/topology.js';
import { partnerToken } from '../support/auth.js';
import { demoSite, getJson } from '../support/demo.js';
import { sensorsOf as sensors } from '../support/topology.js';

const Q = 15 * 60_000;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
type Demo = Awaited<ReturnType<typeof demoSite>>;

describe('derived house consumption on the demo site without its house meter', () => {
  let metered: Demo;
  let derived: Demo;
  let tokens: { metered: string; derived: string };
  // a sunny June morning: PV, battery charging and export all happen in it
  const start = Date.parse('2026-06-21T12:00:00Z');
  const from = Date.parse('2026-06-21T00:00:00Z');
  const to = Date.parse('2026-06-21T11:45:00Z');

  beforeAll(async () => {
    const opts = { speed: 60, history: 'PT12H15M', start };
    [metered, derived] = await Promise.all([
      demoSite(opts),
      demoSite({
        ...opts,
        configure: (c) => void (c.devices = c.devices.filter((d) => d.role !== 'consumption-meter')),
      }),
    ]);
    tokens = { metered: await partnerToken(metered.credentials), derived: await partnerToken(derived.credentials) };
  });
  afterAll(async () => Promise.all([metered?.cleanup(), derived?.cleanup()]));

  const telemetry = async (d: Demo, token: string, id: string) => {
    const r = await getJson(
      `${d.url}/api/v1/devices/${id}/telemetry?interval=${iso(from)}/${iso(to)}&include=default,energy`,
      token,
    );
    expect(r.status).toBe(200);
    return r.body.entries as {
      interval: string;
      power_W: number;
      energy_Wh_increment: number;
      energy_Wh_decrement: number;
    }[];
  };

  it('the topology holds the derived sensor under the house circuit only when there is no house meter', async () => {
    const topo = async (d: Demo, token: string) =>
      (await getJson(`${d.url}/api/v1/sites/${d.siteId}/topology`, token)).body.topology as TopoNode;
    const withMeter = await topo(metered, tokens.metered);
    const without = await topo(derived, tokens.derived);
    expect(sensors(withMeter).map((s) => s.id)).not.toContain('demo-site__CONSUMPTION_METER_DERIVED');
    const house = without.nodes![0]!.nodes!.find((n) => n.id === 'demo-site__house')!;
    expect(house).toMatchObject({ kind: 'circuit', category: 'logical' });
    expect(house.nodes).toEqual([
      {
        id: 'demo-site__CONSUMPTION_METER_DERIVED',
        kind: 'sensor',
        channels: [
          { id: 'power_W', unit: 'W' },
          { id: 'energy_Wh_increment', unit: 'Wh' },
          { id: 'energy_Wh_decrement', unit: 'Wh' },
        ],
        node: { id: 'demo-site__house', kind: 'circuit' },
      },
    ]);
  });

  it('its energy agrees with the house meter of the same simulated site within 1 %, bucket by bucket within 2 % or 20 W', async () => {
    const house = await telemetry(metered, tokens.metered, 'house-meter');
    const est = await telemetry(derived, tokens.derived, 'demo-site__CONSUMPTION_METER_DERIVED');
    const n = (to - from) / Q;
    expect(house).toHaveLength(n);
    expect(est).toHaveLength(n);
    for (let i = 0; i < n; i++) {
      expect(est[i]!.interval).toBe(house[i]!.interval);
      expect(Math.abs(est[i]!.power_W - house[i]!.power_W)).toBeLessThanOrEqual(Math.max(20, 0.02 * house[i]!.power_W));
    }
    // energy over the morning from the power means, and from the lifetime counters
    const wh = (rows: { power_W: number }[]) => rows.reduce((s, r) => s + r.power_W * 0.25, 0);
    const counted = (rows: { energy_Wh_increment: number }[]) =>
      rows.at(-1)!.energy_Wh_increment - rows[0]!.energy_Wh_increment;
    expect(Math.abs(wh(est) - wh(house))).toBeLessThan(0.01 * wh(house));
    expect(Math.abs(counted(est) - counted(house))).toBeLessThan(0.01 * counted(house));
    // a house only draws: the counter out of it stays at zero
    expect(est.at(-1)!.energy_Wh_decrement).toBe(0);
    expect(counted(est)).toBeGreaterThan(0);
  });

  it('the derived site balances: grid + inverter output = house, within 2 % over the morning', async () => {
    const grid = await telemetry(derived, tokens.derived, 'grid-meter__GRID_METER_DERIVED');
    const inverter = (
      await getJson(`${derived.url}/api/v1/devices/inverter/telemetry?interval=${iso(from)}/${iso(to)}`, tokens.derived)
    ).body.entries as { power_AC_W: number }[];
    const est = await telemetry(derived, tokens.derived, 'demo-site__CONSUMPTION_METER_DERIVED');
    const wh = (xs: number[]) => xs.reduce((s, x) => s + x * 0.25, 0);
    const load = wh(est.map((e) => e.power_W));
    // the morning exported (grid < 0) and the inverter delivered (AC < 0): a real balance, not 0 = 0
    expect(Math.min(...grid.map((g) => g.power_W))).toBeLessThan(0);
    expect(Math.abs(wh(grid.map((g) => g.power_W)) - wh(inverter.map((v) => v.power_AC_W)) - load)).toBeLessThan(
      0.02 * load,
    );
  });
});
