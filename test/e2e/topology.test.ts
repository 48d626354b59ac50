import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partnerToken } from '../support/auth.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';

type Node = {
  id: string;
  kind?: string;
  category?: string;
  nodes?: Node[];
  rightCircuit?: Node;
  channels?: { id: string; unit: string }[];
  node?: { id: string; kind: string };
  maxCapacity_J?: number;
  leftCurrent?: string;
};

function walk(n: Node, out: Node[] = []): Node[] {
  out.push(n);
  for (const c of n.nodes ?? []) walk(c, out);
  if (n.rightCircuit) walk(n.rightCircuit, out);
  return out;
}

describe('topology over real Modbus and HTTP', () => {
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let token: string;

  beforeAll(async () => {
    demo = await demoSite({ speed: 60 });
    token = await partnerToken(demo.credentials);
    // every device answered once: identity, capacities and PV optimiser count are known
    await waitFor('all devices online', () =>
      [...demo.daemon.site.devices.values()].every((d) => d.online && d.lastSeen !== null),
    );
    await waitFor('optimiser count learned', () => (demo.daemon.site.devices.get('inverter')?.pvModules ?? 0) > 0);
  });
  afterAll(async () => demo?.cleanup());

  it('compact: one aggregated BMS (__bb_agg) with the whole capacity and one __dcm PV array', async () => {
    const { status, body } = await getJson(`${demo.url}/api/v1/sites/${demo.siteId}/topology`, token);
    expect(status).toBe(200);
    const root: Node = body.topology;
    expect(root.id).toBe(demo.siteId);
    expect(root.kind).toBeUndefined();
    expect(root.category).toBe('site');
    const all = walk(root);
    const bms = all.filter((n) => n.kind === 'BMS');
    expect(bms).toHaveLength(1);
    const sim = demo.sim.model.config;
    const totalWh = sim.battery.blocks.reduce((s, b) => s + b.capacityWh, 0);
    expect(bms[0]!.maxCapacity_J).toBeCloseTo(totalWh * 3600, -3);
    expect(bms[0]!.nodes?.[0]?.id).toMatch(/__bb_agg$/);
    const pv = all.filter((n) => n.kind === 'PV-array');
    expect(pv).toHaveLength(1);
    expect(pv[0]!.nodes?.[0]?.id).toMatch(/__dcm$/);

    // the inverter's DC circuit holds the BMS, the PV hub and through it the PV array
    const inverter = all.find((n) => n.kind === 'inverter')!;
    expect(inverter.leftCurrent).toBeTruthy();
    const dc = walk(inverter.rightCircuit!);
    expect((inverter.rightCircuit as { currentType?: string }).currentType).toBe('DC');
    expect(dc.some((n) => n.kind === 'BMS')).toBe(true);
    expect(dc.some((n) => n.kind === 'PV-array')).toBe(true);
    expect(dc.some((n) => n.kind === 'circuit' && n.category === 'logical')).toBe(true);

    // the connection point sits beside the inverter under the logical home controller
    const home = root.nodes!.find((n) => n.category === 'logical')!;
    const kinds = home.nodes!.map((n) => n.kind);
    expect(kinds).toContain('inverter');
    expect(kinds).toContain('connection-point');
    const cp = home.nodes!.find((n) => n.kind === 'connection-point')!;
    expect(cp.category).toBe('grid');
    expect(cp.rightCircuit?.category).toBe('grid');
  });

  it('expanded: one BMS per battery block and one PV array per optimiser, each with its sensor', async () => {
    const { status, body } = await getJson(`${demo.url}/api/v1/sites/${demo.siteId}/topology?compact=false`, token);
    expect(status).toBe(200);
    const all = walk(body.topology);
    const sim = demo.sim.model.config;
    const bms = all.filter((n) => n.kind === 'BMS');
    expect(bms).toHaveLength(sim.battery.blocks.length);
    bms.forEach((b, i) => expect(b.maxCapacity_J).toBeCloseTo(sim.battery.blocks[i]!.capacityWh * 3600, -3));
    const pv = all.filter((n) => n.kind === 'PV-array');
    expect(pv).toHaveLength(sim.pv.optimisers.length);
    expect(all.some((n) => n.id.endsWith('__bb_agg'))).toBe(false);
  });

  it('sensor nodes carry channels with units and name the element they measure; ids are served by telemetry', async () => {
    const { body } = await getJson(`${demo.url}/api/v1/sites/${demo.siteId}/topology?compact=false`, token);
    const sensors = walk(body.topology).filter((n) => n.kind === 'sensor');
    expect(sensors.length).toBeGreaterThanOrEqual(5);
    for (const s of sensors) {
      expect(s.channels!.length).toBeGreaterThan(0);
      for (const c of s.channels!) expect(typeof c.unit).toBe('string');
      expect(s.node?.kind).toBeTruthy();
      const r = await getJson(
        `${demo.url}/api/v1/devices/${encodeURIComponent(s.id)}/telemetry?interval=PT1H/${new Date(demo.clock.now()).toISOString()}`,
        token,
      );
      expect(r.status).toBe(200);
    }
    const grid = sensors.find((s) => s.id.endsWith('__GRID_METER_DERIVED'))!;
    expect(grid.node?.kind).toBe('connection-point');
    expect(grid.channels!.map((c) => c.id)).toContain('state');
    const soc = sensors.find((s) => s.id.endsWith('__bb_agg'));
    expect(soc).toBeUndefined(); // expanded mode has blocks, not the aggregate
  });

  it('unknown site is a 404 with the error body; compact must be a boolean', async () => {
    const a = await getJson(`${demo.url}/api/v1/sites/nope/topology`, token);
    expect(a.status).toBe(404);
    expect(a.body).toMatchObject({ statusCode: 404, error: 'Not Found', code: 'SITE_NOT_FOUND' });
    const b = await getJson(`${demo.url}/api/v1/sites/${demo.siteId}/topology?compact=maybe`, token);
    expect(b.status).toBe(400);
    expect(b.body.code).toBe('INVALID_PARAMETER');
    expect(b.body.message).toContain('compact');
  });

  it('lists sites and devices with identity read from SunSpec model 1', async () => {
    const v1 = await getJson(`${demo.url}/api/v1/sites`, token);
    expect(v1.body.sites).toEqual([
      expect.objectContaining({ siteId: demo.siteId, timezone: expect.any(String), currency: expect.any(String) }),
    ]);
    const v2 = await getJson(`${demo.url}/api/v2/sites`, token);
    expect(v2.body).toEqual({ siteIds: [demo.siteId] });
    const devs = await getJson(`${demo.url}/api/v1/devices`, token);
    expect(devs.body.devices.length).toBe(demo.daemon.site.config.devices.length);
    for (const d of devs.body.devices) {
      expect(d.online).toBe(true);
      expect(d.manufacturer).toBeTruthy();
      expect(d.serial).toBeTruthy();
      expect(Date.parse(d.lastSeen)).not.toBeNaN();
    }
  });

  it('serves an OpenAPI document that lists every route', async () => {
    const { status, body } = await getJson(`${demo.url}/openapi.json`);
    expect(status).toBe(200);
    expect(body.openapi).toMatch(/^3\./);
    for (const p of [
      '/api/v1/sites',
      '/api/v2/sites',
      '/api/v1/devices',
      '/api/v1/sites/{siteId}/topology',
      '/api/v1/devices/{synthId}/telemetry',
    ]) {
      expect(Object.keys(body.paths)).toContain(p);
    }
  });
});
