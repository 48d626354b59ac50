/** The spec's conformance (test/conformance/spec.test.ts runs it), section by section: Resources and their fields: each resource of the spec and its fields. */
import { beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_KINDS } from '../../../src/core/channels.js';
import type { TopoNode } from '../../../src/site/topology.js';
import { basic, bearer, ownerTokens, partnerToken, postForm } from '../../support/auth.js';
import { demoSite, getJson } from '../../support/demo.js';
import { allNodes, sensorsOf } from '../../support/topology.js';
import { api, coveredBy, demo, siteId, streamEnding, TZ, tel, topology } from './context.js';

export function specResources(): void {
  describe('Resources and their fields › Token response', () => {
    let partnerBody: Record<string, unknown>;
    let ownerBody: Record<string, unknown>;
    beforeAll(async () => {
      partnerBody = (
        await postForm(
          demo.credentials.tokenUrl,
          { grant_type: 'client_credentials' },
          { authorization: basic(demo.credentials.client.id, demo.credentials.client.secret) },
        )
      ).body;
      ownerBody = await ownerTokens(demo.credentials, 'svc/device.read');
    });
    it('access_token: a string, sent as a Bearer token', async () => {
      expect(typeof partnerBody.access_token).toBe('string');
      expect((await api('/api/v1/sites', partnerBody.access_token as string)).status).toBe(200);
    });
    it('id_token: only in the authorization-code flow', () => {
      expect(typeof ownerBody.id_token).toBe('string');
      expect(partnerBody).not.toHaveProperty('id_token');
    });
    it('refresh_token: only in the authorization-code flow', () => {
      expect(typeof ownerBody.refresh_token).toBe('string');
      expect(partnerBody).not.toHaveProperty('refresh_token');
    });
    it('token_type: Bearer', () => {
      expect([partnerBody.token_type, ownerBody.token_type]).toEqual(['Bearer', 'Bearer']);
    });
    it('expires_in: integer seconds, 3600 as documented', () => {
      expect([partnerBody.expires_in, ownerBody.expires_in]).toEqual([3600, 3600]);
    });
  });

  describe('Resources and their fields › Dynamic tariff page', () => {
    it('tariffId, interval and nextToken are always present, with the metadata of the creation request and the values', async () => {
      const writer = (await ownerTokens(demo.credentials)).access_token as string;
      const meta = { name: 'Spot', currency: 'EUR', timezone: TZ, kind: 'import' };
      const created = await fetch(`${demo.url}/api/v1/dynamicTariffs`, {
        method: 'POST',
        headers: { ...bearer(writer), 'content-type': 'application/json' },
        body: JSON.stringify({ ...meta, values: [{ interval: '2026-11-23T10:00:00Z/PT1H', importPrice: 0.31 }] }),
      });
      expect(created.status).toBe(201);
      const { tariffId } = (await created.json()) as { tariffId: string };
      const page = (await api(`/api/v1/dynamicTariffs/${tariffId}`)).body;
      expect(page).toMatchObject({
        tariffId,
        ...meta,
        values: [{ interval: '2026-11-23T10:00:00Z/2026-11-23T11:00:00Z', importPrice: 0.31 }],
      });
      expect(page.interval).toMatch(/^\S+Z\/\S+Z$/);
      expect(page).toHaveProperty('nextToken');
    });
  });

  describe('Resources and their fields › Telemetry entry', () => {
    it('deviceKind: the values shown (battery_pack, inverter, meter), plus pv for PV arrays, listed as the enum in /openapi.json', async () => {
      const doc = (await getJson(`${demo.url}/openapi.json`)).body;
      const entry =
        doc.paths['/api/v1/devices/{synthId}/telemetry'].get.responses['200'].content['application/json'].schema
          .properties.entries.items;
      expect(entry.properties.deviceKind.enum).toEqual([...DEVICE_KINDS]);
      const sent = new Set<string>();
      for (const s of demo.daemon.site.streams()) {
        const { body } = await tel(s.id, 'interval=2026-11-23T10:00:00Z/PT15M');
        for (const e of body.entries) sent.add(e.deviceKind);
      }
      expect([...sent].sort()).toEqual(['battery_pack', 'inverter', 'meter', 'pv']);
      for (const k of sent) expect(entry.properties.deviceKind.enum).toContain(k);
    });

    it('deviceId is the sensor id (stream key) and interval the bucket, start/end in UTC', async () => {
      const id = streamEnding('__bb_agg');
      const { body } = await tel(id, 'interval=2026-11-23T10:00:00Z/PT30M');
      expect(body.entries.map((e: { deviceId: string; interval: string }) => [e.deviceId, e.interval])).toEqual([
        [id, '2026-11-23T10:00:00Z/2026-11-23T10:15:00Z'],
        [id, '2026-11-23T10:15:00Z/2026-11-23T10:30:00Z'],
      ]);
    });

    it('one field per channel: the channels of the sensor that were requested', async () => {
      const topo = sensorsOf(await topology());
      for (const s of topo) {
        const { body } = await tel(s.id, 'interval=2026-11-23T10:00:00Z/PT15M&include=default,energy');
        const fields = Object.keys(body.entries[0]).filter(
          (k) => !['deviceKind', 'kind', 'deviceId', 'interval'].includes(k),
        );
        const listed = s.channels!.map((c) => c.id).filter((c) => c !== 'soh' || fields.includes('soh'));
        expect(fields.sort(), s.id).toEqual(listed.sort());
      }
    });

    it('Scale of soc: percent (0-100) by default, as the topology declares', async () => {
      const bms = sensorsOf(await topology()).find((s) => s.channels?.some((c) => c.id === 'soc'))!;
      expect(bms.channels!.find((c) => c.id === 'soc')!.unit).toBe('percent');
      const { body } = await tel(bms.id, 'interval=2026-11-23T00:00:00Z/P1D');
      expect(body.entries.some((e: { soc: number }) => e.soc > 1)).toBe(true);
    });

    it('Scale of soc: with api.socScale fraction the values are 0-1 and the topology declares the unit fraction', async () => {
      const frac = await demoSite({
        speed: 1,
        start: Date.parse('2026-11-24T01:00:00Z'),
        history: 'PT2H',
        configure: (c) => (c.api.socScale = 'fraction'),
      });
      try {
        const t = await partnerToken(frac.credentials);
        const tree = (await getJson(`${frac.url}/api/v1/sites/${frac.daemon.site.id}/topology`, t)).body
          .topology as TopoNode;
        const bms = sensorsOf(tree).find((s) => s.channels?.some((c) => c.id === 'soc'))!;
        expect(bms.channels!.find((c) => c.id === 'soc')!.unit).toBe('fraction');
        const { body } = await getJson(
          `${frac.url}/api/v1/devices/${bms.id}/telemetry?interval=2026-11-23T23:00:00Z/PT1H`,
          t,
        );
        expect(body.entries.length).toBeGreaterThan(0);
        for (const e of body.entries) expect(e.soc).toBeGreaterThanOrEqual(0), expect(e.soc).toBeLessThanOrEqual(1);
      } finally {
        await frac.cleanup();
      }
    });
  });

  describe('Resources and their fields › Channels', () => {
    const unitOf = async (channel: string) => {
      const units = sensorsOf(await topology()).flatMap((s) =>
        s.channels!.filter((c) => c.id === channel).map((c) => c.unit),
      );
      expect(units.length, channel).toBeGreaterThan(0);
      return [...new Set(units)];
    };
    it.each([
      ['power_W', 'W'],
      ['power_AC_W', 'W'],
      ['power_DC_W', 'W'],
      ['soc', 'percent'],
      ['soh', 'percent'],
      ['energy_Wh_increment', 'Wh'],
      ['energy_Wh_decrement', 'Wh'],
      ['state', 'None'],
    ])('%s in %s', async (channel, unit) => {
      expect(await unitOf(channel)).toEqual([unit]);
    });

    it('power_W on a battery: negative while discharging, positive while charging', async () => {
      const { body } = await tel(streamEnding('__bb_agg'), 'interval=2026-11-23T00:00:00Z/P1D');
      const p = body.entries.map((e: { power_W: number }) => e.power_W);
      expect(p.some((x: number) => x < 0)).toBe(true);
      expect(p.some((x: number) => x > 0)).toBe(true);
    });

    it('energy_Wh_increment ≥ 0 and energy_Wh_decrement ≤ 0, only when include contains energy', async () => {
      const id = streamEnding('__bb_agg');
      const plain = (await tel(id, 'interval=2026-11-23T10:00:00Z/PT1H')).body.entries;
      expect(plain[0]).not.toHaveProperty('energy_Wh_increment');
      const withEnergy = (await tel(id, 'interval=2026-11-23T10:00:00Z/PT1H&include=energy')).body.entries;
      for (const e of withEnergy) {
        expect(e.energy_Wh_increment).toBeGreaterThanOrEqual(0);
        expect(e.energy_Wh_decrement).toBeLessThanOrEqual(0);
        expect(e).not.toHaveProperty('power_W');
      }
    });

    it('energy direction: charging from solar raises the BMS increment and makes the PV decrement more negative', async () => {
      const at = (id: string) =>
        tel(id, 'interval=2026-11-23T09:00:00Z/2026-11-23T13:00:00Z&resolution=PT1H&include=energy').then(
          (r) => r.body.entries,
        );
      const [bms, pv] = await Promise.all([at(streamEnding('__bb_agg')), at(streamEnding('__dcm'))]);
      expect(bms.at(-1).energy_Wh_increment).toBeGreaterThan(bms[0].energy_Wh_increment);
      expect(pv.at(-1).energy_Wh_decrement).toBeLessThan(pv[0].energy_Wh_decrement);
    });
  });

  describe('Resources and their fields › Sensor ID suffixes (telemetry streams)', () => {
    const nodeKindOf = async (suffix: string) =>
      sensorsOf(await topology()).find((s) => s.id.endsWith(suffix))?.node?.kind;
    it('__GRID_METER_DERIVED: the grid import/export meter (connection point)', async () =>
      expect(await nodeKindOf('__GRID_METER_DERIVED')).toBe('connection-point'));
    it('__bb_agg: the aggregated battery', async () => expect(await nodeKindOf('__bb_agg')).toBe('BMS'));
    it('__dcm: combined DC measurement (compact PV)', async () => expect(await nodeKindOf('__dcm')).toBe('PV-array'));
    it('__CONSUMPTION_METER_DERIVED: estimated house consumption, on a site without a house meter', () => {
      coveredBy(
        'e2e/derived-consumption.test.ts',
        'derived house consumption on the demo site without its house meter',
      );
    });
    it('__PV_DERIVED and __BATTERY_DERIVED: alternative naming of other device types, not used by sitegw', () => {
      expect(demo.daemon.site.streams().filter((s) => /__(PV|BATTERY)_DERIVED$/.test(s.id))).toEqual([]);
    });
    it('clients need not parse ids: every sensor carries kind, and the element it measures in node', async () => {
      for (const s of sensorsOf(await topology(`?compact=false`))) {
        expect(s.kind).toBe('sensor');
        expect(s.node?.kind, s.id).toMatch(/^(BMS|PV-array|inverter|connection-point|circuit)$/);
      }
    });
  });

  describe('Resources and their fields › Topology', () => {
    let compact: TopoNode[];
    let expanded: TopoNode[];
    beforeAll(async () => {
      compact = allNodes(await topology());
      expanded = allNodes(await topology('?compact=false'));
    });
    const values = (f: keyof TopoNode) =>
      new Set([...compact, ...expanded].map((n) => n[f]).filter((v) => v !== undefined));

    it('an object with key topology, a tree rooted at the site; the root has no kind', async () => {
      const root = await topology();
      expect(root).toMatchObject({ id: siteId, category: 'site' });
      expect(root).not.toHaveProperty('kind');
    });
    it('id: a string on every node; for a sensor node the telemetry stream key', () => {
      for (const n of compact) expect(typeof n.id).toBe('string');
      const streams = new Set(demo.daemon.site.streams().map((x) => x.id));
      for (const n of expanded.filter((x) => x.kind === 'sensor')) expect(streams.has(n.id), n.id).toBe(true);
    });
    it('kind: sensor, circuit, inverter, connection-point, BMS, PV-array', () => {
      expect([...values('kind')].sort()).toEqual([
        'BMS',
        'PV-array',
        'circuit',
        'connection-point',
        'inverter',
        'sensor',
      ]);
    });
    it('category: site, logical, behind-inverter, grid', () => {
      expect([...values('category')].sort()).toEqual(['behind-inverter', 'grid', 'logical', 'site']);
    });
    it('currentType: AC-split-phase, AC-three-phase or DC', () => {
      for (const v of values('currentType')) expect(['AC-split-phase', 'AC-three-phase', 'DC']).toContain(v);
    });
    it('nodeType: neutral, source-sink, source', () => {
      expect([...values('nodeType')].sort()).toEqual(['neutral', 'source', 'source-sink']);
    });
    it('nodes: the children', () => {
      expect(compact.filter((n) => n.nodes).flatMap((n) => n.nodes!).length).toBeGreaterThan(5);
    });
    it('channels: only on sensor nodes, an array of {id, unit}', () => {
      for (const n of expanded) {
        if (n.kind !== 'sensor') expect(n.channels, n.id).toBeUndefined();
        else for (const c of n.channels!) expect(Object.keys(c).sort()).toEqual(['id', 'unit']);
      }
    });
    it('node: only on sensor nodes, the element the sensor measures', () => {
      for (const n of expanded) {
        if (n.kind !== 'sensor') expect(n.node, n.id).toBeUndefined();
        else
          expect(
            expanded.some((x) => x.id === n.node!.id && x.kind === n.node!.kind),
            n.id,
          ).toBe(true);
      }
    });
    it('maxCapacity_J: on BMS nodes, in joules', () => {
      const bms = expanded.filter((n) => n.kind === 'BMS');
      for (const n of bms) expect(n.maxCapacity_J, n.id).toBeGreaterThan(3_600_000);
      for (const n of expanded.filter((x) => x.maxCapacity_J !== undefined)) expect(n.kind).toBe('BMS');
    });
    it('leftCurrent: a current type, on inverter and connection-point elements', () => {
      for (const n of expanded.filter((x) => x.leftCurrent !== undefined))
        expect(['inverter', 'connection-point']).toContain(n.kind);
      for (const n of expanded.filter((x) => x.kind === 'inverter' || x.kind === 'connection-point'))
        expect(['AC-split-phase', 'AC-three-phase', 'DC']).toContain(n.leftCurrent);
    });
    it('rightCircuit: the DC circuit of an inverter, the grid circuit of a connection point', () => {
      for (const n of expanded.filter((x) => x.rightCircuit !== undefined))
        expect(['inverter', 'connection-point']).toContain(n.kind);
      expect(expanded.find((n) => n.kind === 'inverter')!.rightCircuit).toMatchObject({
        kind: 'circuit',
        currentType: 'DC',
      });
      expect(expanded.find((n) => n.kind === 'connection-point')!.rightCircuit).toMatchObject({
        kind: 'circuit',
        category: 'grid',
      });
    });
  });

  describe('Resources and their fields › Savings entry', () => {
    it('entries[].interval in canonical UTC form and entries[].savings a number', async () => {
      const { status, body } = await api(
        `/api/v2/sites/${siteId}/savings?interval=2026-11-23T00:00:00Z/PT2H&resolution=PT1H`,
      );
      expect(status).toBe(200);
      expect(body.entries.length).toBeGreaterThan(0);
      for (const e of body.entries) {
        expect(e.interval).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        expect(typeof e.savings).toBe('number');
      }
    });
  });

  describe('Resources and their fields › Device publish list', () => {
    it('publishTo: an array of {clientId, data}, telemetry-realtime the value shown', async () => {
      const owner = (await ownerTokens(demo.credentials)).access_token as string;
      const r = await fetch(`${demo.url}/api/v1/devices/house-meter`, {
        method: 'PATCH',
        headers: { ...bearer(owner), 'content-type': 'application/json' },
        body: JSON.stringify({ publishTo: [{ clientId: demo.credentials.client.id, data: ['telemetry-realtime'] }] }),
      });
      expect(r.status).toBe(200);
      expect(((await r.json()) as { publishTo: unknown }).publishTo).toEqual([
        { clientId: demo.credentials.client.id, data: ['telemetry-realtime'] },
      ]);
    });
  });
}
