/** The spec's conformance (test/conformance/spec.test.ts runs it), section by section: States and transitions, and Endpoints: each route of the spec. */
import { beforeAll, describe, expect, it } from 'vitest';
import type { TopoNode } from '../../../src/site/topology.js';
import { bearer, clientToken, ownerTokens } from '../../support/auth.js';
import { getJson } from '../../support/demo.js';
import { allNodes, sensorsOf } from '../../support/topology.js';
import { api, coveredBy, DAY, demo, Q, siteId, streamEnding, TZ, tel, token, topology } from './context.js';

export function specEndpoints(): void {
  describe('States and transitions', () => {
    it('the state channel of a connection point is ok, not_present or unknown', async () => {
      const { body } = await tel(streamEnding('__GRID_METER_DERIVED'), 'interval=2026-11-23T00:00:00Z/P1D');
      for (const e of body.entries) expect(['ok', 'not_present', 'unknown']).toContain(e.state);
    });
    it('ok: the system is on grid', async () => {
      const { body } = await tel(streamEnding('__GRID_METER_DERIVED'), 'interval=2026-11-23T00:00:00Z/P1D');
      expect(new Set(body.entries.map((e: { state: string }) => e.state))).toEqual(new Set(['ok']));
    });
    it('not_present: the system is off grid', () => {
      coveredBy('conformance/spec/auth-events.ts', 'state: ok, not_present or unknown');
    });
    it('unknown: the grid state is unknown (the meter does not answer)', () => {
      coveredBy(
        'e2e/device-outage.test.ts',
        'go offline with a named error and an unknown grid state, then recover on the same ports',
      );
    });
    it('a grid event is sent when the status changes (ok → not_present → ok)', () => {
      coveredBy(
        'e2e/realtime.test.ts',
        'sends exactly one not_present and one ok event near the switch times, and telemetry agrees',
      );
    });
  });

  describe('Endpoints › GET /api/v1/dynamicTariffs/{tariffId}', () => {
    let tariffId: string;
    beforeAll(async () => {
      const writer = (await ownerTokens(demo.credentials)).access_token as string;
      const values = Array.from({ length: 3 }, (_, i) => ({
        interval: `${new Date(Date.parse('2026-11-01T00:00:00Z') + i * 7 * DAY).toISOString()}/PT1H`,
        importPrice: 0.2 + i / 100,
      }));
      const r = await fetch(`${demo.url}/api/v1/dynamicTariffs`, {
        method: 'POST',
        headers: { ...bearer(writer), 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Weekly', currency: 'EUR', timezone: TZ, kind: 'import', values }),
      });
      tariffId = ((await r.json()) as { tariffId: string }).tariffId;
    });
    const walk = async (first: string) => {
      const pages = [];
      let r = await api(`/api/v1/dynamicTariffs/${tariffId}?${first}`);
      for (;;) {
        expect(r.status).toBe(200);
        pages.push(r.body);
        if (r.body.nextToken === null || pages.length > 60) return pages;
        r = await api(`/api/v1/dynamicTariffs/${tariffId}?nextToken=${encodeURIComponent(r.body.nextToken)}`);
      }
    };

    it('interval: the first page is the latest 7 days inside it; each nextToken moves back 7 days until interval.start is reached', async () => {
      // 2026-10-04 .. 2026-11-15: six weeks, of which only the last three hold values
      const pages = await walk('interval=2026-10-04T00:00:00Z/2026-11-15T00:00:00Z');
      expect(pages.map((p) => p.interval)).toEqual([
        '2026-11-08T00:00:00Z/2026-11-15T00:00:00Z',
        '2026-11-01T00:00:00Z/2026-11-08T00:00:00Z',
        '2026-10-25T00:00:00Z/2026-11-01T00:00:00Z',
        '2026-10-18T00:00:00Z/2026-10-25T00:00:00Z',
        '2026-10-11T00:00:00Z/2026-10-18T00:00:00Z',
        '2026-10-04T00:00:00Z/2026-10-11T00:00:00Z',
      ]);
      expect(pages.map((p) => p.values.length)).toEqual([1, 1, 0, 0, 0, 0]);
    });

    it('without interval: the previous 7 days, nextToken paginating backwards through the available history', async () => {
      const pages = await walk('');
      const [s, e] = pages[0].interval.split('/').map(Date.parse);
      expect(e - s).toBe(7 * DAY);
      expect(e).toBeGreaterThanOrEqual(demo.clock.now() - Q);
      expect(pages.flatMap((p) => p.values)).toHaveLength(3);
    });

    it('nextToken takes precedence over interval', async () => {
      const first = (await api(`/api/v1/dynamicTariffs/${tariffId}?interval=2026-10-04T00:00:00Z/2026-11-15T00:00:00Z`))
        .body;
      const t = encodeURIComponent(first.nextToken);
      const a = await api(`/api/v1/dynamicTariffs/${tariffId}?nextToken=${t}`);
      const b = await api(`/api/v1/dynamicTariffs/${tariffId}?nextToken=${t}&interval=2020-01-01T00:00:00Z/P1D`);
      expect(b.body).toEqual(a.body);
    });

    it('401 when not authenticated, 404 when the tariff is not found', async () => {
      expect((await api(`/api/v1/dynamicTariffs/${tariffId}`, '')).status).toBe(401);
      expect((await api('/api/v1/dynamicTariffs/nope')).body).toMatchObject({
        statusCode: 404,
        code: 'TARIFF_NOT_FOUND',
      });
    });
  });

  describe('Endpoints › GET /api/v1/devices/{synthId}/telemetry', () => {
    const grid = () => streamEnding('__GRID_METER_DERIVED');

    it('synthId: the sensor id from the topology, not the top-level device id', async () => {
      expect((await tel(grid(), 'interval=2026-11-23T10:00:00Z/PT15M')).body.entries).toHaveLength(1);
      expect((await tel('grid-meter', 'interval=2026-11-23T10:00:00Z/PT15M')).body).toEqual({ entries: [] });
    });

    it('interval forms: start/end, start/duration, duration/end', async () => {
      const forms = [
        '2026-11-23T10:00:00Z/2026-11-23T11:00:00Z',
        '2026-11-23T10:00:00Z/PT1H',
        'PT1H/2026-11-23T11:00:00Z',
      ];
      const answers = await Promise.all(forms.map((f) => tel(grid(), `interval=${f}`)));
      for (const a of answers) expect(a.body).toEqual(answers[0]!.body);
      expect(answers[0]!.body.entries).toHaveLength(4);
    });

    it('interval is required', async () => {
      expect((await tel(grid(), '')).body).toMatchObject({ statusCode: 400, code: 'MISSING_PARAMETER' });
    });

    it.each([
      ['PT15M', 4],
      ['PT1H', 1],
    ])('resolution %s', async (resolution, n) => {
      expect(
        (await tel(grid(), `interval=2026-11-23T10:00:00Z/PT1H&resolution=${resolution}`)).body.entries,
      ).toHaveLength(n);
    });

    it('resolution P1D: local days on midnight in the site time zone', async () => {
      const { body } = await tel(grid(), 'interval=2026-11-22T23:00:00Z/P1D&resolution=P1D');
      expect(body.entries.map((e: { interval: string }) => e.interval)).toEqual([
        '2026-11-22T23:00:00Z/2026-11-23T23:00:00Z',
      ]);
    });

    it('resolution: PT15M is the default', async () => {
      expect((await tel(grid(), 'interval=2026-11-23T10:00:00Z/PT1H')).body).toEqual(
        (await tel(grid(), 'interval=2026-11-23T10:00:00Z/PT1H&resolution=PT15M')).body,
      );
    });

    it('include: default (power, SoC, state) and/or energy, comma-separated; default is default', async () => {
      const q = 'interval=2026-11-23T10:00:00Z/PT15M';
      const [none, def, en, both] = await Promise.all([
        tel(grid(), q),
        tel(grid(), `${q}&include=default`),
        tel(grid(), `${q}&include=energy`),
        tel(grid(), `${q}&include=default,energy`),
      ]);
      expect(none.body).toEqual(def.body);
      expect(Object.keys(def.body.entries[0])).toEqual(expect.arrayContaining(['power_W', 'state']));
      expect(Object.keys(en.body.entries[0])).toEqual(
        expect.arrayContaining(['energy_Wh_increment', 'energy_Wh_decrement']),
      );
      expect(both.body.entries[0]).toEqual({ ...def.body.entries[0], ...en.body.entries[0] });
    });

    it('a bare device id with no stream stored: 200 and an empty entries array, never 404', async () => {
      const r = await tel('no-such-device', 'interval=2026-11-23T10:00:00Z/PT1H');
      expect(r).toEqual({ status: 200, body: { entries: [] } });
      const doc = (await getJson(`${demo.url}/openapi.json`)).body;
      expect(Object.keys(doc.paths['/api/v1/devices/{synthId}/telemetry'].get.responses)).not.toContain('404');
    });

    it('recommended use: every topology sensor id answers with entries of its channels', async () => {
      for (const s of sensorsOf(await topology())) {
        const { body } = await tel(s.id, 'interval=2026-11-23T10:00:00Z/PT15M');
        expect(body.entries.length, s.id).toBe(1);
      }
    });
  });

  describe('Endpoints › GET /api/v1/sites/{siteId}/topology', () => {
    const bmsCount = (t: TopoNode) => allNodes(t).filter((n) => n.kind === 'BMS').length;
    const pvCount = (t: TopoNode) => allNodes(t).filter((n) => n.kind === 'PV-array').length;

    it('compact: default true', async () => {
      expect(await topology()).toEqual(await topology('?compact=true'));
    });
    it('Battery blocks: compact=true one aggregated BMS (sensor __bb_agg) with the whole capacity; compact=false one per block with its own', async () => {
      const [c, x] = [await topology('?compact=true'), await topology('?compact=false')];
      const bms = (t: TopoNode) => allNodes(t).filter((n) => n.kind === 'BMS');
      expect(bms(c)).toHaveLength(1);
      expect(sensorsOf(bms(c)[0]!)[0]!.id).toMatch(/__bb_agg$/);
      expect(bmsCount(x)).toBe(2);
      expect(bms(c)[0]!.maxCapacity_J).toBe(bms(x).reduce((a, n) => a + n.maxCapacity_J!, 0));
    });
    it('PV optimisers: compact=true one aggregated PV-array (sensor __dcm); compact=false one per optimiser', async () => {
      const [c, x] = [await topology('?compact=true'), await topology('?compact=false')];
      expect(pvCount(c)).toBe(1);
      expect(sensorsOf(allNodes(c).find((n) => n.kind === 'PV-array')!)[0]!.id).toMatch(/__dcm$/);
      expect(pvCount(x)).toBe(demo.daemon.site.devices.get('inverter')!.pvModules);
    });
    it('compact mode: telemetry for an aggregate sensor gives values across all blocks', async () => {
      const q = 'interval=2026-11-23T10:00:00Z/PT15M';
      const agg = (await tel(streamEnding('__bb_agg'), q)).body.entries[0].power_W;
      const blocks = await Promise.all(['battery-1', 'battery-2'].map((id) => tel(id, q)));
      expect(agg).toBeCloseTo(
        blocks.reduce((a, b) => a + b.body.entries[0].power_W, 0),
        0,
      );
    });
    it('the inverter DC circuit holds the BMS, PV-array and logical PV hub; the connection point sits beside the inverter under the home controller', async () => {
      const root = await topology();
      const home = root.nodes!.find((n) => n.category === 'logical')!;
      const kinds = home.nodes!.map((n) => n.kind);
      expect(kinds).toEqual(expect.arrayContaining(['inverter', 'connection-point']));
      const dc = home.nodes!.find((n) => n.kind === 'inverter')!.rightCircuit!;
      expect(dc.nodes!.map((n) => n.kind)).toEqual(expect.arrayContaining(['BMS', 'circuit']));
      expect(allNodes(dc).some((n) => n.kind === 'PV-array')).toBe(true);
    });
    it('an unknown site is 404 SITE_NOT_FOUND', async () => {
      expect((await api('/api/v1/sites/elsewhere/topology')).body).toMatchObject({
        statusCode: 404,
        code: 'SITE_NOT_FOUND',
      });
    });
  });

  describe('Endpoints › GET /api/v2/sites', () => {
    it("lists the customer's site ids", async () => {
      expect((await api('/api/v2/sites')).body).toEqual({ siteIds: [siteId] });
    });
  });

  describe('Endpoints › GET /api/v1/sites and GET /api/v1/devices', () => {
    it('sites: {sites:[{siteId,name,timezone,currency}]}', async () => {
      expect((await api('/api/v1/sites')).body.sites).toEqual([
        expect.objectContaining({ siteId, timezone: TZ, currency: 'EUR' }),
      ]);
    });
    it('devices: {devices:[{deviceId,siteId,kind,…,publishTo}]}', async () => {
      const { devices } = (await api('/api/v1/devices')).body;
      expect(devices.map((d: { deviceId: string }) => d.deviceId).sort()).toEqual(
        [...demo.daemon.site.devices.keys()].sort(),
      );
      for (const d of devices) expect(d).toMatchObject({ siteId, publishTo: expect.any(Array) });
    });
  });

  describe('Endpoints › PATCH /api/v1/devices/{synthId}', () => {
    const patch = (tok: string, publishTo: unknown) =>
      fetch(`${demo.url}/api/v1/devices/inverter`, {
        method: 'PATCH',
        headers: { ...bearer(tok), 'content-type': 'application/json' },
        body: JSON.stringify({ publishTo }),
      });
    it('1. needs a customer access token with the write device scope', async () => {
      const readOnly = (await ownerTokens(demo.credentials, 'svc/device.read')).access_token as string;
      expect((await patch(readOnly, [])).status).toBe(403);
      expect((await patch(token, [])).status).toBe(403); // a partner token
    });
    it('2. replaces the entire publishTo list', async () => {
      const owner = (await ownerTokens(demo.credentials)).access_token as string;
      const other = await clientToken(demo, 'conf-other', []);
      expect(other).toBeTruthy();
      await patch(owner, [{ clientId: 'conf-other', data: ['telemetry-realtime'] }]);
      const r = await patch(owner, [{ clientId: demo.credentials.client.id, data: ['telemetry-realtime'] }]);
      expect(((await r.json()) as { publishTo: unknown }).publishTo).toEqual([
        { clientId: demo.credentials.client.id, data: ['telemetry-realtime'] },
      ]);
    });
    it('3. a customer device reaches the partner telemetry only after a publishTo entry with telemetry-realtime', () => {
      coveredBy(
        'e2e/realtime.test.ts',
        'a publishTo grant takes effect from the next push, in a customer-class message of its own',
      );
    });
  });

  describe('Endpoints › GET /api/v2/sites/{siteId}/savings', () => {
    const savings = (q: string) => api(`/api/v2/sites/${siteId}/savings?${q}`);
    it('interval forms: start/end and start/duration', async () => {
      const a = await savings('interval=2026-11-23T00:00:00Z/2026-11-23T06:00:00Z&resolution=PT1H');
      const b = await savings('interval=2026-11-23T00:00:00Z/PT6H&resolution=PT1H');
      expect(a.status).toBe(200);
      expect(b.body).toEqual(a.body);
      expect(a.body.entries).toHaveLength(6);
    });
    it('resolution is required', async () => {
      expect((await savings('interval=2026-11-23T00:00:00Z/PT6H')).body).toMatchObject({
        statusCode: 400,
        code: 'MISSING_PARAMETER',
      });
    });
    it('P1M returns one entry per calendar month', async () => {
      const { body } = await savings('interval=2026-11-01T00:00:00%2B01:00/2026-12-01T00:00:00%2B01:00&resolution=P1M');
      expect(body.entries.map((e: { interval: string }) => e.interval)).toEqual([
        '2026-10-31T23:00:00Z/2026-11-30T23:00:00Z',
      ]);
    });
  });
}
