/**
 * The grid operator's limits at the meter, end to end (docs/grid-operator.md "At the meter"): the
 * gateway as its own process (`sitegw run`) with `gridOperator:` pointing at the project's IEEE
 * 2030.5 test server (HTTPS with client certificates, bodies validated against the schemas), on the
 * simulator's SunSpec 704 inverter over real Modbus TCP. The operator's DefaultDERControl, then a
 * DERControl of 0 W export, are held at the simulated grid meter through the site-limits loop as
 * the source `grid-operator`; when the server goes away the control runs to its end, then the
 * default applies. A clear June noon with a full battery: the surplus can only be exported. The
 * status page, /status.json and the uplink's status message say all along whether the server
 * answers, which control is in force and until when.
 */

import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { identityOfPem } from '../../src/gridop/identity.js';
import { clientMrid } from '../../src/gridop/mirror.js';
import { CSIPAUS_NS, child, textOf } from '../../src/gridop/xml.js';
import { loadContract } from '../support/contract.js';
import { type CsipPki, HAVE_OPENSSL, makeCsipPki } from '../support/csip-pki.js';
import { getJson, waitFor } from '../support/demo.js';
import {
  cleanRigs,
  exportW,
  fullBattery,
  metric,
  NOON,
  now,
  ONE_PCT,
  type Rig,
  rig,
  simConfig,
  statusPage,
  token,
} from '../support/limits-rig.js';
import { aedesBroker, type Collector, collect, type TestBroker } from '../support/mqtt-brokers.js';
import { type MirrorState, type SepServer, startSepServer } from '../support/sep-server.js';
import { HAVE_XMLLINT } from '../support/xmllint.js';

const nowS = () => Math.floor(Date.now() / 1000);
const PREFIX = 'sitegw/demo-site';

/** the next uplink status message `pick` accepts, checked against docs/asyncapi.yaml */
async function uplinkStatus(c: Collector, pick: (body: any) => boolean) {
  const m = await waitFor('an uplink status', () => c.messages.find((x) => pick(JSON.parse(x.payload))), 30_000);
  const body = JSON.parse(m.payload);
  expect(loadContract(PREFIX).check(m.topic, body)).toEqual([]);
  return body;
}
/** how long the operator's control of 0 W runs, s: long enough to see it outlast its server */
const CONTROL_SECONDS = 45;

async function limitsView(r: Rig) {
  const res = await fetch(`${r.url}/api/v1/sites/demo-site/limits`, {
    headers: { authorization: `Bearer ${await token(r)}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { inForce: { exportW: number | null; sources: Record<string, string> } };
}

describe.skipIf(!HAVE_OPENSSL || !HAVE_XMLLINT)("the grid operator's limits held at the meter", () => {
  let pki: CsipPki;
  let server: SepServer | undefined;
  let broker: TestBroker;
  let statuses: Collector;
  beforeAll(async () => {
    pki = makeCsipPki();
    broker = await aedesBroker();
    statuses = await collect(broker.url, `${PREFIX}/status`);
  });
  afterAll(async () => {
    pki?.remove();
    await statuses?.close();
    await broker?.close();
  });
  afterEach(async () => {
    await cleanRigs();
    await server?.close();
    server = undefined;
  });

  it('holds the default, then a control of 0 W export; when the server goes away the control runs to its end, then the default', {
    timeout: 300_000,
  }, async () => {
    const s = await startSepServer({ cert: pki.server.cert, key: pki.server.key, ca: pki.serca });
    server = s;
    s.pollRate = 5;
    s.programs = [{ mRID: 'A1', primacy: 1, defaultLimits: { exportW: 1500 }, controls: [] }];
    const cfg = simConfig(fullBattery);
    const r = await rig(
      cfg,
      NOON,
      [
        'gridOperator:',
        '  protocol: csip-aus',
        `  discoveryUrl: ${s.url}`,
        `  certificate: ${pki.device.cert}`,
        `  key: ${pki.device.key}`,
        `  ca: ${pki.serca}`,
        "  nmi: '4102345678'",
        '  pollSeconds: 5',
        'uplink:',
        `  url: ${broker.url}`,
        '  statusIntervalSeconds: 5',
        `  protocolVersion: ${broker.protocolVersion}`,
        '',
      ].join('\n'),
    );
    // without a limit the site would export well over 3 kW now
    expect(now(r).pvAvailableW.reduce((a, b) => a + b, 0) - now(r).houseW).toBeGreaterThan(3000);
    await waitFor(
      'the EndDevice registered with its NMI',
      () => [...s.endDevices.values()][0]?.nmi === '4102345678',
      60_000,
    );

    // 1. the operator's default: 1500 W export, held at the meter
    await waitFor('the default held at the meter', () => Math.abs(exportW(r) - 1500) < 100, 60_000);
    expect((await limitsView(r)).inForce).toMatchObject({ exportW: 1500, sources: { exportW: 'grid-operator' } });
    expect(await metric(r, 'sitegw_gridop_reachable ')).toEqual(['sitegw_gridop_reachable 1']);

    // 2. a DERControl of 0 W export for CONTROL_SECONDS from now
    const start = nowS();
    const end = start + CONTROL_SECONDS;
    s.programs[0]!.controls = [{ mRID: 'C1', start, duration: CONTROL_SECONDS, limits: { exportW: 0 } }];
    await waitFor('zero export', () => exportW(r) < ONE_PCT && now(r).pvCurtailed, 30_000);
    expect((await limitsView(r)).inForce).toMatchObject({ exportW: 0, sources: { exportW: 'grid-operator' } });
    expect(await metric(r, 'sitegw_gridop_control_until_seconds')).toContain(
      `sitegw_gridop_control_until_seconds{kind="control"} ${end}`,
    );
    const until = new Date(end * 1000).toISOString().replace('.000Z', 'Z');
    const inForce = { kind: 'control', id: 'C1', until };
    // the meter readings for the operator: none lost (since 2.6.0 of the contract)
    const readings = { readingsUnsent: expect.any(Number), readingsDropped: 0 };
    const page = await statusPage(r);
    expect(page.json.gridOperator).toMatchObject({
      reachable: true,
      control: inForce,
      values: { exportW: 0 },
      ...readings,
    });
    expect(page.html).toContain('<h2>Grid operator</h2>');
    expect(page.html).toMatch(/reachable<\/span>/);
    expect(page.html).toContain('<code>C1</code>: export ≤ 0 W');
    const up = await uplinkStatus(statuses, (b) => b.gridOperator?.control?.id === 'C1');
    expect(up.gridOperator).toMatchObject({ reachable: true, control: inForce, values: { exportW: 0 }, ...readings });

    // the server is told of the site's DER from what the gateway reads: the inverter's rating
    // (read from its 704 model), the batteries' capacity and state of charge, and while the
    // control curtails, the power the site could still give
    const report = (kind: string) => s.reports.get(kind)?.el;
    const avail = () => Number(textOf(child(report('DERAvailability')!, 'statWAvail'), 'value') ?? 0);
    await waitFor(
      'the curtailed power reported as available',
      () => report('DERAvailability') && avail() > 1000,
      30_000,
    );
    const cap = report('DERCapability')!;
    expect(textOf(child(cap, 'rtgMaxW'), 'value')).toBe(String(cfg.inverter.ratedW));
    expect(textOf(child(cap, 'rtgMaxWh'), 'value')).toBe(
      String(cfg.battery.blocks.reduce((a, b) => a + b.capacityWh, 0)),
    );
    expect(textOf(cap, 'type')).toBe('83');
    expect(textOf(cap, 'doeModesSupported', CSIPAUS_NS)).toBe('07');
    const soc = Number(textOf(child(report('DERStatus')!, 'stateOfChargeStatus'), 'value')) / 100;
    expect(Math.abs(soc - cfg.battery.blocks[0]!.socMaxPct)).toBeLessThan(1);

    // and the readings, as MirrorUsagePoints: while the operator's default held the export at
    // 1500 W, the connection point's average power was −1500 W (forward flow, + import), the DER's
    // output (reverse flow, + delivering) the house's load above that
    const id = identityOfPem(readFileSync(pki.device.cert));
    const [site, der] = [s.mirrors.get('/mup/1')!, s.mirrors.get('/mup/2')!];
    expect(site).toMatchObject({ roleFlags: '0003', lfdi: id.lfdi });
    expect(der).toMatchObject({ roleFlags: '0049' });
    const avg = (m: MirrorState, key: string) =>
      m.readings.filter((x) => x.mRID === clientMrid(id.lfdi, `mup/${m === site ? 'site' : 'der'}/${key}/Avg`, 0));
    expect(avg(site, 'powerW').some((x) => Math.abs(x.value + 1500) < 150)).toBe(true);
    expect(avg(der, 'powerW').some((x) => x.value > 1500 && x.value <= cfg.inverter.ratedW)).toBe(true);
    expect(avg(site, 'frequencyHz').at(-1)?.value).toBeGreaterThan(4900);
    expect(s.invalid).toEqual([]);

    // 3. the server goes away: the control holds to its end, unreachable is said
    await s.close();
    server = undefined;
    await waitFor(
      'the server seen gone',
      async () => {
        const m = await metric(r, 'sitegw_gridop_reachable ');
        return m[0] === 'sitegw_gridop_reachable 0';
      },
      30_000,
    );
    const health = await getJson(`${r.url}/healthz`);
    expect(health.body.problems).toContain(
      `the grid operator's server cannot be reached: its control holds until ${new Date(end * 1000).toISOString()}, then its default`,
    );
    const gone = (await uplinkStatus(statuses, (b) => b.gridOperator?.reachable === false)).gridOperator;
    expect(gone).toMatchObject({ control: inForce, values: { exportW: 0 } });
    expect(gone.lastError).toEqual(expect.any(String));
    expect((await statusPage(r)).html).toMatch(/unreachable<\/span> last read/);
    // seen before its end (the wait above is far shorter than the control): still 0 W
    expect(Date.now()).toBeLessThan(end * 1000);
    expect((await limitsView(r)).inForce).toMatchObject({ exportW: 0, sources: { exportW: 'grid-operator' } });
    expect(exportW(r)).toBeLessThan(ONE_PCT);

    // 4. after its end the operator's default, not an unlimited export, with the server still gone
    await waitFor(
      'the default at the meter after the control',
      () => Date.now() > end * 1000 && Math.abs(exportW(r) - 1500) < 100,
      CONTROL_SECONDS * 1000 + 30_000,
    );
    expect((await limitsView(r)).inForce).toMatchObject({ exportW: 1500, sources: { exportW: 'grid-operator' } });
    expect(await metric(r, 'sitegw_gridop_reachable ')).toEqual(['sitegw_gridop_reachable 0']);
  });
});
