/**
 * The Energy Site API specification, section by section, against the real demo daemon over
 * real sockets: one test per rule and per table row, named after the spec's headings. Where a
 * rule needs a long scenario that another test file already runs, the test here names that
 * test and checks that it still exists (`coveredBy`), so every rule is reachable from this file.
 * Decisions where the spec is silent (design.md) are at the end, under "Decisions".
 */
import { readFileSync } from 'node:fs';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_KINDS } from '../../src/core/channels.js';
import type { TopoNode } from '../../src/site/topology.js';
import { basic, bearer, clientToken, get, ownerTokens, partnerToken, postForm } from '../support/auth.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';
import { allNodes, sensorsOf } from '../support/topology.js';
import { StreamClient, tryUpgrade } from '../support/ws-client.js';

type Demo = Awaited<ReturnType<typeof demoSite>>;
const Q = 15 * 60_000;
const DAY = 86_400_000;
const TZ = 'Europe/Berlin';

/** A test (or describe block) whose title starts with `title` exists in `file`: the rule is asserted there. */
function coveredBy(file: string, title: string): void {
  const source = readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
  const opening = new RegExp(`\\b(?:it|describe)\\(\\s*(['"\`])${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
  expect(opening.test(source), `${file} has a test titled "${title}…"`).toBe(true);
}

let demo: Demo;
let token: string;
let siteId: string;
const api = (path: string, tok = token) => getJson(`${demo.url}${path}`, tok);
const tel = (id: string, q: string, tok = token) =>
  api(`/api/v1/devices/${encodeURIComponent(id)}/telemetry?${q}`, tok);
const topology = async (q = ''): Promise<TopoNode> => (await api(`/api/v1/sites/${siteId}/topology${q}`)).body.topology;
const streamEnding = (suffix: string) => demo.daemon.site.streams().find((s) => s.id.endsWith(suffix))!.id;
const wsUrl = (q: string) => `${demo.url.replace(/^http/, 'ws')}/ws?${q}`;

beforeAll(async () => {
  // 02:00 local on 24 Nov 2026, history back to 19 Nov 22:00Z: the spec examples' days are
  // closed, and the accelerated clock pushes a bucket every 15 s of real time
  demo = await demoSite({ speed: 60, start: Date.parse('2026-11-24T01:00:00Z'), history: 'P4DT3H' });
  siteId = demo.daemon.site.id;
  token = await partnerToken(demo.credentials);
}, 120_000);
afterAll(async () => demo?.cleanup());

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
    coveredBy('e2e/derived-consumption.test.ts', 'derived house consumption on the demo site without its house meter');
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
    coveredBy('conformance/spec.test.ts', 'state: ok, not_present or unknown');
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

describe('Authentication › Partner: client credentials', () => {
  it('1. POST /oauth2/token with query grant_type=client_credentials, a form content type and HTTP Basic', async () => {
    const r = await fetch(`${demo.credentials.tokenUrl}?grant_type=client_credentials`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basic(demo.credentials.client.id, demo.credentials.client.secret),
      },
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
  });
  it('3. a new token is requested from the same endpoint when the old one expires', async () => {
    coveredBy('e2e/auth-negative.test.ts', 'an expired access token, a malformed one, an unknown one, and none at all');
    const again = await partnerToken(demo.credentials);
    expect((await api('/api/v1/sites', again)).status).toBe(200);
  });
  it('every HTTP request carries Authorization: Bearer; without it 401', async () => {
    const r = await get(`${demo.url}/api/v1/sites`);
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });
});

describe('Authentication › Customer: authorization code flow', () => {
  it('1-3. authorize → 302 with code and the same state → exchange for access, id and refresh token', async () => {
    const body = await ownerTokens(demo.credentials, 'svc/device.read');
    expect(body.refresh_token).toBeTruthy();
    coveredBy(
      'e2e/auth-flows.test.ts',
      'customer: consent page in a browser, 302 with code and state, code + PKCE verifier for tokens',
    );
  });
  it('4. refresh: grant_type=refresh_token with client_id and refresh_token', async () => {
    const { refresh_token } = await ownerTokens(demo.credentials);
    const r = await postForm(
      demo.credentials.tokenUrl,
      { grant_type: 'refresh_token', client_id: demo.credentials.client.id, refresh_token },
      { authorization: basic(demo.credentials.client.id, demo.credentials.client.secret) },
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
  });
  it('token errors are RFC 6749 bodies', async () => {
    const r = await postForm(
      demo.credentials.tokenUrl,
      { grant_type: 'password' },
      { authorization: basic(demo.credentials.client.id, demo.credentials.client.secret) },
    );
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'unsupported_grant_type', error_description: expect.any(String) });
  });
});

describe('Authentication › Scopes', () => {
  it.each([
    ['svc/device.read', 'read device metadata and telemetry', '/api/v1/devices', 200],
    ['svc/plan.read', 'plan scopes are accepted and reserved (no plan endpoint)', '/api/v1/devices', 403],
  ])('%s: %s', async (scope, _what, path, status) => {
    const t = await partnerToken(demo.credentials, scope);
    expect((await api(path, t)).status).toBe(status);
  });
  it('svc/device.write: change devices; needed to set publishTo', () => {
    coveredBy('conformance/spec.test.ts', '1. needs a customer access token with the write device scope');
  });
  it('svc/plan.write: accepted and reserved: a token can be issued with it', async () => {
    const t = await partnerToken(demo.credentials, 'svc/plan.write');
    expect((await api('/api/v1/devices', t)).status).toBe(403);
  });
});

describe('Events › Connection', () => {
  it('streams is required', async () => {
    expect(await tryUpgrade(wsUrl(''), bearer(token))).toMatchObject({
      open: false,
      status: 400,
      body: { code: 'MISSING_PARAMETER' },
    });
  });
  it.each([
    ['streams', 'telemetry-realtime,grid-events'],
    ['telemetryDevices', 'partner,customer'],
    ['telemetryInclude', 'default,energy'],
  ])('%s: comma-separated %s', async (name, value) => {
    const base = name === 'streams' ? '' : 'streams=telemetry-realtime&';
    expect(await tryUpgrade(wsUrl(`${base}${name}=${value}`), bearer(token))).toEqual({ open: true });
  });
  it('1. the connection carries the same Authorization header as HTTP', async () => {
    expect(await tryUpgrade(wsUrl('streams=grid-events'), {})).toMatchObject({ open: false, status: 401 });
  });
  it('2. a ping at least every 20 s keeps it alive; 3. a disconnect is handled by reconnecting', () => {
    coveredBy('e2e/realtime.test.ts', 'closes a client that sends no ping within the timeout, and keeps those that do');
  });
});

describe('Events › Stream telemetry-realtime', () => {
  let m: any;
  beforeAll(async () => {
    const c = await StreamClient.connect(wsUrl('streams=telemetry-realtime&telemetryInclude=default'), token);
    try {
      m = await waitFor('a telemetry push', () => c.of('telemetry-realtime')[0], 60_000);
    } finally {
      c.close();
    }
  }, 70_000);
  it('stream: always telemetry-realtime', () => expect(m.stream).toBe('telemetry-realtime'));
  it('entries: telemetry entries, each with kind, deviceId and interval plus telemetry fields', () => {
    expect(m.entries.length).toBeGreaterThan(0);
    for (const x of m.entries) {
      expect(x).toMatchObject({ kind: x.deviceKind, deviceId: expect.any(String), interval: m.interval });
      expect(Object.keys(x).length).toBeGreaterThan(4);
    }
  });
  it('telemetryDevices: partner or customer, the class of the devices of this message', () =>
    expect(m.telemetryDevices).toBe('partner'));
  it('interval: the recently completed 15 minute period', () => {
    const [s, e] = m.interval.split('/').map(Date.parse);
    expect([e - s, s % Q]).toEqual([Q, 0]);
    expect(e).toBeLessThanOrEqual(demo.clock.now());
  });
  it('telemetryInclude: the field groups requested', () => expect(m.telemetryInclude).toEqual(['default']));
  it('1. sent every 15 minutes, clock-aligned, for the period just completed', () => {
    coveredBy(
      'e2e/realtime.test.ts',
      'pushes each completed bucket at its boundary, chunked, with every stream the partner may see',
    );
  });
  it('2. one interval can take several messages; 3. device classes in separate messages; 4. best effort', () => {
    coveredBy(
      'e2e/realtime.test.ts',
      'pushes each completed bucket at its boundary, chunked, with every stream the partner may see',
    );
    coveredBy(
      'e2e/realtime.test.ts',
      'a publishTo grant takes effect from the next push, in a customer-class message of its own',
    );
  });
  it('5. receiving customer telemetry: token, publishTo, telemetryDevices=customer', () => {
    coveredBy(
      'e2e/realtime.test.ts',
      'a publishTo grant takes effect from the next push, in a customer-class message of its own',
    );
  });
});

describe('Events › Stream grid-events', () => {
  let e: any;
  beforeAll(async () => {
    const c = await StreamClient.connect(wsUrl('streams=grid-events'), token);
    const post = (on: boolean) =>
      fetch(`${demo.simControl.url}/grid-outage`, { method: 'POST', body: JSON.stringify({ on }) });
    try {
      expect((await post(true)).status).toBe(200);
      e = await waitFor('a grid event', () => c.of('grid-events')[0], 30_000);
    } finally {
      await post(false);
      c.close();
    }
  }, 40_000);
  it('stream: always grid-events', () => expect(e.stream).toBe('grid-events'));
  it('deviceId: the meter, an id the topology lists as a sensor with a state channel', async () => {
    const sensor = sensorsOf(await topology()).find((x) => x.id === e.deviceId);
    expect(sensor, `topology lists ${e.deviceId}`).toBeDefined();
    expect(sensor!.node!.kind).toBe('connection-point');
    expect(sensor!.channels!.map((ch) => ch.id)).toContain('state');
  });
  it('timestamp: ISO 8601 UTC date-time', () => expect(new Date(e.timestamp).toISOString()).toBe(e.timestamp));
  it('deviceKind: always meter', () => expect(e.deviceKind).toBe('meter'));
  it('state: ok, not_present or unknown', () =>
    expect(e).toEqual({
      stream: 'grid-events',
      deviceId: e.deviceId,
      timestamp: e.timestamp,
      deviceKind: 'meter',
      state: 'not_present',
    }));
  it('1. an event is sent only when the status changes', () => {
    coveredBy(
      'e2e/realtime.test.ts',
      'sends exactly one not_present and one ok event near the switch times, and telemetry agrees',
    );
  });
  it('2. only for devices the partner has as a partner; customer-delegated devices get none', () => {
    coveredBy(
      'e2e/realtime.test.ts',
      'sends exactly one not_present and one ok event near the switch times, and telemetry agrees',
    );
  });
  it('3. status from before the connection: the topology gives the meter id, the telemetry endpoint its state', async () => {
    const { body } = await tel(e.deviceId, 'interval=2026-11-23T10:00:00Z/PT1H');
    expect(body.entries.map((x: { state: string }) => x.state)).toEqual(['ok', 'ok', 'ok', 'ok']);
  });
});

describe('Errors', () => {
  const keys = (b: object) => Object.keys(b).sort();
  it('401 GET dynamic tariff: not authenticated, the same body as the site list endpoint', async () => {
    const [t401, s401] = await Promise.all([api('/api/v1/dynamicTariffs/x', ''), api('/api/v1/sites', '')]);
    expect([t401.status, s401.status]).toEqual([401, 401]);
    expect(keys(t401.body)).toEqual(keys(s401.body));
    expect(t401.body).toMatchObject({ statusCode: 401, code: 'UNAUTHORIZED' });
  });
  it('404 GET dynamic tariff: tariff not found, the same body as the site endpoints', async () => {
    const [t404, s404] = await Promise.all([api('/api/v1/dynamicTariffs/x'), api('/api/v1/sites/x/topology')]);
    expect([t404.status, s404.status]).toEqual([404, 404]);
    expect(keys(t404.body)).toEqual(keys(s404.body));
    expect(keys(t404.body)).toEqual(['code', 'error', 'message', 'statusCode']);
  });
  it('telemetry for an id with no stream stored: 200 with an empty entries array', async () => {
    expect((await tel('nothing', 'interval=2026-11-23T10:00:00Z/PT1H')).body).toEqual({ entries: [] });
  });
});

describe('Limits', () => {
  it('page window: 7 days; nextToken moves back 7 days per page', () => {
    coveredBy(
      'conformance/spec.test.ts',
      'interval: the first page is the latest 7 days inside it; each nextToken moves back 7 days until interval.start is reached',
    );
    coveredBy('conformance/spec.test.ts', 'without interval: the previous 7 days, nextToken paginating backwards');
  });
  it('ping interval: at least one ping every 20 seconds', () => {
    coveredBy('conformance/spec.test.ts', '2. a ping at least every 20 s keeps it alive');
  });
  it('telemetry push schedule: every 15 minutes, clock-aligned', () => {
    coveredBy('conformance/spec.test.ts', 'interval: the recently completed 15 minute period');
  });
  it('access token lifetime: expires_in 3600', () => {
    coveredBy('conformance/spec.test.ts', 'expires_in: integer seconds, 3600 as documented');
  });
  it('default telemetry resolution: PT15M', () => {
    coveredBy('conformance/spec.test.ts', 'resolution: PT15M is the default');
  });
});

describe('Versioning', () => {
  it('the version is part of the path: /api/v1 for most endpoints, /api/v2 for the site list and savings', async () => {
    const doc = (await getJson(`${demo.url}/openapi.json`)).body;
    const paths = Object.keys(doc.paths).filter((p) => p.startsWith('/api/'));
    expect(paths.filter((p) => p.startsWith('/api/v2/')).sort()).toEqual([
      '/api/v2/sites',
      '/api/v2/sites/{siteId}/savings',
    ]);
    expect(paths.every((p) => /^\/api\/v[12]\//.test(p))).toBe(true);
  });
});

describe('Decisions (design.md) › partial periods: an entry always stands for its whole period', () => {
  it('telemetry 2026-11-20T00:00Z/2026-11-21T00:00Z at P1D (Europe/Berlin): two whole local days, each as a query for exactly that day answers', async () => {
    const id = streamEnding('__GRID_METER_DERIVED');
    const { body } = await tel(
      id,
      'interval=2026-11-20T00:00:00Z/2026-11-21T00:00:00Z&resolution=P1D&include=default,energy',
    );
    expect(body.entries.map((e: { interval: string }) => e.interval)).toEqual([
      '2026-11-19T23:00:00Z/2026-11-20T23:00:00Z',
      '2026-11-20T23:00:00Z/2026-11-21T23:00:00Z',
    ]);
    for (const e of body.entries) {
      const whole = await tel(id, `interval=${e.interval}&resolution=P1D&include=default,energy`);
      expect(whole.body.entries).toEqual([e]);
    }
  });

  it('savings 2026-11-22T23:00Z/PT1H at P1D: the whole day, label and value', async () => {
    const cut = await api(`/api/v2/sites/${siteId}/savings?interval=2026-11-22T23:00:00Z/PT1H&resolution=P1D`);
    const day = await api(
      `/api/v2/sites/${siteId}/savings?interval=2026-11-22T23:00:00Z/2026-11-23T23:00:00Z&resolution=P1D`,
    );
    expect(cut.body.entries).toEqual(day.body.entries);
    expect(cut.body.entries.map((e: { interval: string }) => e.interval)).toEqual([
      '2026-11-22T23:00:00Z/2026-11-23T23:00:00Z',
    ]);
  });

  it('PT1H: an hour cut at both edges is answered whole', async () => {
    const id = streamEnding('__bb_agg');
    const cut = await tel(id, 'interval=2026-11-23T10:20:00Z/2026-11-23T10:40:00Z&resolution=PT1H');
    expect(cut.body).toEqual((await tel(id, 'interval=2026-11-23T10:00:00Z/PT1H&resolution=PT1H')).body);
  });

  it('P1M: a month cut by the interval is answered whole', async () => {
    const cut = await api(`/api/v2/sites/${siteId}/savings?interval=2026-11-22T23:00:00Z/P1D&resolution=P1M`);
    const month = await api(
      `/api/v2/sites/${siteId}/savings?interval=2026-10-31T23:00:00Z/2026-11-30T23:00:00Z&resolution=P1M`,
    );
    expect(cut.body.entries).toEqual(month.body.entries);
  });

  it('a period still in progress holds the data so far', async () => {
    const today = DateTime.fromMillis(demo.clock.now(), { zone: TZ }).startOf('day');
    const id = streamEnding('__GRID_METER_DERIVED');
    const { body } = await tel(id, `interval=${today.toUTC().toISO()}/PT1H&resolution=P1D`);
    expect(body.entries.map((e: { interval: string }) => e.interval)).toEqual([
      `${today.toUTC().toISO({ suppressMilliseconds: true })}/${today.plus({ days: 1 }).toUTC().toISO({ suppressMilliseconds: true })}`,
    ]);
  });

  it('the rule is written in the OpenAPI descriptions of the interval parameters', async () => {
    const doc = (await getJson(`${demo.url}/openapi.json`)).body;
    for (const p of ['/api/v1/devices/{synthId}/telemetry', '/api/v2/sites/{siteId}/savings']) {
      const interval = doc.paths[p].get.parameters.find((x: { name: string }) => x.name === 'interval');
      expect(interval.description ?? interval.schema.description, p).toMatch(/widened to whole periods/);
    }
  });
});

describe('Decisions (design.md) › lenient input where the spec is silent, strict output', () => {
  const expanded = async (q: string) => {
    const r = await api(`/api/v1/sites/${siteId}/topology?${q}`);
    expect(r.status, q).toBe(200);
    return allNodes(r.body.topology).filter((n) => n.kind === 'BMS').length > 1;
  };
  it.each(['compact=true', 'compact=True', 'compact=TRUE', 'compact=1', 'compact=', 'compact', ''])(
    '%s: compact',
    async (q) => {
      expect(await expanded(q)).toBe(false);
    },
  );
  it.each(['compact=false', 'compact=False', 'compact=FALSE', 'compact=0', 'compact=0&compact=false'])(
    '%s: expanded',
    async (q) => {
      expect(await expanded(q)).toBe(true);
    },
  );
  it('compact=yes is a 400 naming what is accepted', async () => {
    const r = await api(`/api/v1/sites/${siteId}/topology?compact=yes`);
    expect(r.body).toMatchObject({
      statusCode: 400,
      code: 'INVALID_PARAMETER',
      message: expect.stringMatching(/true, false, 1 or 0/),
    });
  });
  it('compact is not required in /openapi.json', async () => {
    const doc = (await getJson(`${demo.url}/openapi.json`)).body;
    const compact = doc.paths['/api/v1/sites/{siteId}/topology'].get.parameters.find(
      (x: { name: string }) => x.name === 'compact',
    );
    expect(compact.required).not.toBe(true);
  });
  it('repeated list parameters: include=default&include=energy is include=default,energy', async () => {
    const id = streamEnding('__bb_agg');
    const q = 'interval=2026-11-23T10:00:00Z/PT15M';
    const repeated = await tel(id, `${q}&include=default&include=energy`);
    expect(repeated.status).toBe(200);
    expect(repeated.body).toEqual((await tel(id, `${q}&include=default,energy`)).body);
  });
  it('a scalar parameter repeated: the same value counts once, different values are a 400', async () => {
    const id = streamEnding('__bb_agg');
    expect(
      (await tel(id, 'interval=2026-11-23T10:00:00Z/PT15M&interval=2026-11-23T10:00:00Z/PT15M')).body.entries,
    ).toHaveLength(1);
    expect(
      (await tel(id, 'interval=2026-11-23T10:00:00Z/PT15M&interval=2026-11-23T11:00:00Z/PT15M')).body,
    ).toMatchObject({ statusCode: 400, code: 'INVALID_PARAMETER' });
  });
  it('unknown query parameters are ignored (HTTP)', async () => {
    expect((await tel(streamEnding('__bb_agg'), 'interval=2026-11-23T10:00:00Z/PT15M&foo=1')).status).toBe(200);
    expect((await api(`/api/v1/sites/${siteId}/topology?bar=2`)).status).toBe(200);
  });
  it('WebSocket: unknown parameters ignored, repeated list parameters joined, grid-event means grid-events', async () => {
    for (const q of [
      'streams=grid-events&foo=1',
      'streams=telemetry-realtime&streams=grid-events',
      'streams=grid-event',
    ]) {
      expect(await tryUpgrade(wsUrl(q), bearer(token)), q).toEqual({ open: true });
    }
  });
  it('WebSocket: messages always spell the stream grid-events', () => {
    coveredBy('conformance/spec.test.ts', 'stream: always grid-events');
  });
});

describe('Decisions (design.md) › the OpenAPI document is true for every route', () => {
  it('every documented response of every route validates against /openapi.json', () => {
    coveredBy('conformance/openapi.test.ts', 'every documented status of every route');
  });
});
