/**
 * The CSIP-AUS client against an IEEE 2030.5 server the project writes (test/support/sep-server.ts):
 * HTTPS with client certificates made by openssl as 2030.5 issues them, every body validated
 * against the schemas on both sides. Discovery, registration, a control in force, a control
 * replaced, a cancelled one, the default after the server goes away, the responses posted, lists
 * paged. The limits are read from the hand-off (onLimits) the site-limits loop subscribes to.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Logger, pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GridOperatorConfig } from '../../src/config/types.js';
import { ScaledClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/log.js';
import { GridOperatorClient } from '../../src/gridop/client.js';
import { CCM8_SUITE } from '../../src/gridop/http.js';
import { identityOfPem } from '../../src/gridop/identity.js';
import type { GridOperatorLimits } from '../../src/gridop/limits.js';
import { clientMrid, type MirrorPoint, type MirrorValues } from '../../src/gridop/mirror.js';
import type { DerReport } from '../../src/gridop/report.js';
import { RESPONSE_STATUS } from '../../src/gridop/resources.js';
import { loadSaved } from '../../src/gridop/saved.js';
import { gridOperatorBody } from '../../src/gridop/status-body.js';
import { CSIPAUS_NS, child, textOf } from '../../src/gridop/xml.js';
import { type CsipPki, HAVE_OPENSSL, makeCsipPki } from '../support/csip-pki.js';
import { waitFor } from '../support/demo.js';
import { type MirrorState, type SepServer, startSepServer } from '../support/sep-server.js';
import { HAVE_XMLLINT } from '../support/xmllint.js';

const nowS = () => Math.floor(Date.now() / 1000);

describe.skipIf(!HAVE_OPENSSL || !HAVE_XMLLINT)('the CSIP-AUS client against a 2030.5 server', () => {
  let pki: CsipPki;
  let server: SepServer | undefined;
  let client: GridOperatorClient | undefined;
  beforeAll(() => {
    pki = makeCsipPki();
  });
  afterAll(() => pki?.remove());
  /** servers a test starts besides the one start() made */
  const servers: SepServer[] = [];
  afterEach(async () => {
    await client?.stop();
    await server?.close();
    for (const s of servers.splice(0)) await s.close();
    client = undefined;
    server = undefined;
  });

  async function start(
    opts: {
      ciphers?: string;
      device?: { cert: string; key: string };
      report?: () => DerReport;
      mirror?: () => Partial<Record<MirrorPoint, MirrorValues>>;
      stateFile?: string;
      log?: Logger;
    } = {},
  ) {
    server = await startSepServer({
      cert: pki.server.cert,
      key: pki.server.key,
      ca: pki.serca,
      ...(opts.ciphers ? { ciphers: opts.ciphers } : {}),
    });
    const device = opts.device ?? pki.device;
    const config: GridOperatorConfig = {
      protocol: 'csip-aus',
      discoveryUrl: server.url,
      certificate: device.cert,
      key: device.key,
      ca: pki.serca,
      nmi: '4102345678',
      pollSeconds: 1,
      pen: 62345,
    };
    const seen: GridOperatorLimits[] = [];
    client = new GridOperatorClient({
      config,
      clock: new ScaledClock(1),
      log: opts.log ?? (process.env.GRIDOP_DEBUG ? (await import('pino')).pino({ level: 'debug' }) : silentLogger()),
      minPollSeconds: 1,
      ...(opts.report ? { report: opts.report } : {}),
      ...(opts.mirror ? { mirror: opts.mirror, sampleSeconds: 0.1 } : {}),
      ...(opts.stateFile ? { stateFile: opts.stateFile } : {}),
    });
    client.onLimits((l) => seen.push(l));
    return { server, client, seen, config };
  }

  it('discovers, registers its EndDevice by LFDI/SFDI with the NMI, and follows a control, its replacement and its cancellation', async () => {
    const { server, client, seen } = await start();
    const t = nowS();
    server.offsetSeconds = 120;
    server.programs = [
      {
        mRID: 'A1',
        primacy: 1,
        defaultLimits: { exportW: 5000 },
        controls: [{ mRID: 'C1', start: t + 118, duration: 600, limits: { exportW: 1500 } }],
      },
    ];
    client.start();
    const id = identityOfPem(readFileSync(pki.device.cert));
    await waitFor('the EndDevice registered', () => server.endDevices.get(id.lfdi)?.nmi === '4102345678');
    expect(server.endDevices.get(id.lfdi)?.sfdi).toBe(id.sfdi);
    // the server's clock is 120 s ahead: the control, written on that clock, is in force
    const first = await waitFor('the control in force', () => seen.find((l) => l.kind === 'control'));
    expect(first).toMatchObject({ source: 'grid-operator', exportW: 1500, controlId: 'C1', until: (t + 718) * 1000 });
    expect(client.status()).toMatchObject({ reachable: true, endDevice: '/edev/1', lfdi: id.lfdi, sfdi: id.sfdi });
    expect(Math.abs(client.status().clockOffsetSeconds! - 120)).toBeLessThanOrEqual(2);
    // and sitegw's own clock health hears of it: its records are labelled on its own clock
    expect(client.health().problems).toEqual([
      expect.stringMatching(/^the wall clock is 1(19|20|21) s behind the grid operator's server/),
    ]);
    await waitFor('received and started', () => server.responses.length >= 2);
    expect(server.responses.slice(0, 2)).toEqual([
      { href: '/rsp', lfdi: id.lfdi, subject: 'C1', status: RESPONSE_STATUS.received },
      { href: '/rsp', lfdi: id.lfdi, subject: 'C1', status: RESPONSE_STATUS.started },
    ]);

    // replaced: the server supersedes C1 with C2
    server.programs[0]!.controls = [
      { mRID: 'C1', start: t + 118, duration: 600, limits: { exportW: 1500 }, status: 4 },
      { mRID: 'C2', start: t + 118, duration: 600, limits: { exportW: 0 }, status: 1 },
    ];
    await waitFor('the replacement in force', () => client.current()?.controlId === 'C2');
    expect(client.current()?.exportW).toBe(0);
    await waitFor('C1 superseded, C2 received and started', () => server.responses.length >= 5);
    expect(server.responses.slice(2).map((r) => [r.subject, r.status])).toEqual(
      expect.arrayContaining([
        ['C1', RESPONSE_STATUS.superseded],
        ['C2', RESPONSE_STATUS.received],
        ['C2', RESPONSE_STATUS.started],
      ]),
    );

    // cancelled: the default comes back
    server.programs[0]!.controls[1]!.status = 2;
    await waitFor('the default after the cancellation', () => client.current()?.kind === 'default');
    expect(client.current()).toMatchObject({ exportW: 5000, controlId: 'DEF0', until: null });
    await waitFor('C2 cancelled', () =>
      server.responses.some((r) => r.subject === 'C2' && r.status === RESPONSE_STATUS.cancelled),
    );
    expect(server.invalid).toEqual([]);
  });

  // up to 20-30 s per wait on a loaded machine, more than vitest's default 60 s in all
  it('keeps a control to its end when the server goes away, then the default; posts the completion when it is back', {
    timeout: 150_000,
  }, async () => {
    const { server: first, client, seen } = await start();
    const server = first;
    const t = nowS();
    server.programs = [
      {
        mRID: 'B1',
        primacy: 1,
        defaultLimits: { exportW: 2000, generationW: 60_000 },
        controls: [{ mRID: 'D1', start: t - 5, duration: 9, limits: { exportW: 0 } }],
      },
    ];
    const reachableAtChange: [string, boolean][] = [];
    client.onLimits((l) => reachableAtChange.push([l.kind, client.status().reachable]));
    client.start();
    await waitFor('the control in force', () => client.current()?.controlId === 'D1,DEF0');
    await server.close();
    await waitFor('the server seen gone', () => client.status().reachable === false, 30_000);
    expect(client.status().lastError).toMatch(/^GRIDOP_UNREACHABLE/);
    await waitFor('the default after the control ended', () => client.current()?.kind === 'default', 30_000);
    expect(client.current()).toMatchObject({ exportW: 2000, generationW: 60_000, controlId: 'DEF0' });
    // the control held until the server's own end for it, not until the server went
    const during = seen.filter((l) => l.controlId === 'D1,DEF0');
    expect(during.at(-1)?.until).toBe((t + 4) * 1000);
    // the default came while the server was gone: the control ran to its end without it
    expect(reachableAtChange).toEqual([
      ['control', true],
      ['default', false],
    ]);
    expect(client.health().problems).toEqual([
      "the grid operator's server cannot be reached: its default control holds",
    ]);
    // 'completed' could not be posted; it waits for the server
    expect(client.status().responsesPending).toBeGreaterThan(0);
    const back = await startSepServer({
      cert: pki.server.cert,
      key: pki.server.key,
      ca: pki.serca,
      port: Number(new URL(first.url).port),
    });
    servers.push(back);
    back.programs = first.programs;
    await waitFor('the completion posted', () =>
      back.responses.some((r) => r.subject === 'D1' && r.status === RESPONSE_STATUS.completed),
    );
    await waitFor('reachable again', () => client.status().reachable);
    expect(client.status().responsesPending).toBe(0);
    // the restored server had forgotten the device: it registered again, with its NMI
    expect([...back.endDevices.values()]).toEqual([{ sfdi: client.identity.sfdi, nmi: '4102345678' }]);
    expect(back.invalid).toEqual([]);
  });

  // up to 20-30 s per wait on a loaded machine, more than vitest's default 60 s in all
  it('after a restart while the server is gone, runs the saved control to its end, then the saved default', {
    timeout: 150_000,
  }, async () => {
    const stateFile = join(pki.dir, 'gridop-state.json');
    const { server, client, config } = await start({ stateFile });
    const t = nowS();
    server.programs = [
      {
        mRID: '5A',
        primacy: 1,
        defaultLimits: { exportW: 2500 },
        controls: [{ mRID: '5C', start: t - 1, duration: 10, limits: { exportW: 0 } }],
      },
    ];
    client.start();
    await waitFor(
      'the control in force and saved',
      () => client.current()?.controlId === '5C' && existsSync(stateFile),
    );
    await client.stop();
    await server.close();

    const again = new GridOperatorClient({
      config,
      clock: new ScaledClock(1),
      log: silentLogger(),
      minPollSeconds: 1,
      stateFile,
    });
    const changes: [string | null, boolean][] = [];
    again.onLimits((l) => changes.push([l.controlId, again.status().reachable]));
    again.start();
    try {
      // restored before any read of the server
      expect(again.current()).toMatchObject({ exportW: 0, controlId: '5C', until: (t + 9) * 1000 });
      await waitFor('the saved default after the control ended', () => again.current()?.kind === 'default', 30_000);
      expect(again.current()).toMatchObject({ exportW: 2500, controlId: 'DEF0' });
      expect(changes).toEqual([
        ['5C', false],
        ['DEF0', false],
      ]);
    } finally {
      await again.stop();
    }
  });

  it('forgets in memory and in its state file the controls the server no longer lists', async () => {
    const stateFile = join(pki.dir, 'pruned.json');
    const { server, client } = await start({ stateFile });
    const t = nowS();
    server.programs = [
      { mRID: '6A', primacy: 1, controls: [{ mRID: '6C0FFEE', start: t + 600, duration: 60, limits: { exportW: 0 } }] },
    ];
    client.start();
    await waitFor(
      'the control saved with its phase',
      () => existsSync(stateFile) && readFileSync(stateFile, 'utf8').includes('"6C0FFEE","received"'),
    );
    server.programs = [{ mRID: '6A', primacy: 1, controls: [] }];
    await waitFor('the control forgotten', () => !readFileSync(stateFile, 'utf8').includes('6C0FFEE'));
  });

  it('leaves a damaged state file or one of another server unused, and says so', async () => {
    const stateFile = join(pki.dir, 'damaged.json');
    writeFileSync(stateFile, '{"version":1,"programs":"no"}');
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (l: string) => lines.push(l) });
    const { config } = await start();
    const c = new GridOperatorClient({ config, clock: new ScaledClock(1), log, minPollSeconds: 1, stateFile });
    c.start();
    await c.stop();
    expect(lines.join('')).toMatch(
      /"reason":"not a saved state: \/[^"]*".*"msg":"grid operator: saved state not used"/,
    );
    const other = { version: 1, savedAt: 0, discoveryUrl: 'https://elsewhere/dcap', lfdi: c.identity.lfdi };
    writeFileSync(
      stateFile,
      JSON.stringify({ ...other, offsetSeconds: null, programs: [], randomization: [], phases: [] }),
    );
    expect(loadSaved(stateFile, { discoveryUrl: config.discoveryUrl, lfdi: c.identity.lfdi })).toEqual({
      ok: false,
      reason: 'written for another server or certificate',
    });
  });

  // up to 20-30 s per wait on a loaded machine, more than vitest's default 60 s in all
  it('names a server that sends garbage, a refusal or a huge body, and keeps the controls it read', {
    timeout: 150_000,
  }, async () => {
    const { server, client } = await start();
    const t = nowS();
    server.programs = [
      {
        mRID: 'C0',
        primacy: 1,
        controls: [{ mRID: 'C3', start: t - 5, duration: 600, limits: { generationW: 3000 } }],
      },
    ];
    client.start();
    await waitFor('the control in force', () => client.current()?.generationW === 3000);
    const faults: [{ status: number; body: string }, RegExp][] = [
      [
        { status: 200, body: 'not xml at all' },
        /^GRIDOP_INVALID_XML: GET \/derp\/0\/derc\?s=0&l=50: expected an element/,
      ],
      [
        {
          status: 200,
          body: '<DERControlList xmlns="urn:ieee:std:2030.5:ns" all="1" results="1"><DERControl><mRID>zz</mRID></DERControl></DERControlList>',
        },
        /^GRIDOP_INVALID_XML: DERControl has no EventStatus/,
      ],
      [
        { status: 200, body: '<Time xmlns="urn:ieee:std:2030.5:ns"/>' },
        /^GRIDOP_INVALID_XML: expected a DERControlList, got Time/,
      ],
      [{ status: 503, body: '' }, /^GRIDOP_HTTP_STATUS: GET \/derp\/0\/derc\?s=0&l=50: HTTP 503, expected 200/],
      [
        { status: 200, body: `<a>${'x'.repeat(1 << 21)}</a>` },
        /^GRIDOP_INVALID_XML: GET \/derp\/0\/derc: body over 1048576 bytes/,
      ],
    ];
    for (const [fault, message] of faults) {
      server.faults.set('/derp/0/derc', fault);
      await waitFor(`the fault named (${message})`, () => message.test(client.status().lastError ?? ''));
      expect(client.current()).toMatchObject({ generationW: 3000, controlId: 'C3' });
    }
    server.faults.clear();
    await waitFor('reachable again', () => client.status().reachable);
    expect(client.status().invalidBodies).toBeGreaterThanOrEqual(3);
  });

  it("reports the DER's capability and settings when they change, its status and availability every postRate", async () => {
    const site: DerReport = {
      type: 83,
      ratedW: 10_000,
      maxChargeW: 5000,
      maxDischargeW: 5000,
      capacityWh: 13_500,
      connected: true,
      operating: true,
      socPercent: 55,
      availableW: 4200,
      doeModes: { exportW: true, importW: true, generationW: true, loadW: false },
    };
    const { server, client } = await start({ report: () => site });
    server.programs = [{ mRID: 'AA', primacy: 1, controls: [] }];
    client.start();
    await waitFor('status put twice', () => (server.reports.get('DERStatus')?.count ?? 0) >= 2);
    const get = (kind: string) => server.reports.get(kind)!;
    expect(get('DERCapability').count).toBe(1);
    const cap = get('DERCapability').el;
    expect(textOf(child(cap, 'rtgMaxW'), 'value')).toBe('10000');
    expect(textOf(child(cap, 'rtgMaxWh'), 'value')).toBe('13500');
    expect(textOf(cap, 'type')).toBe('83');
    expect(textOf(cap, 'doeModesSupported', CSIPAUS_NS)).toBe('07');
    expect(textOf(get('DERSettings').el, 'doeModesEnabled', CSIPAUS_NS)).toBe('07');
    const status = get('DERStatus').el;
    expect(textOf(child(status, 'genConnectStatus'), 'value')).toBe('07');
    expect(textOf(child(status, 'stateOfChargeStatus'), 'value')).toBe('5500');
    expect(textOf(child(get('DERAvailability').el, 'statWAvail'), 'value')).toBe('4200');
    site.ratedW = 50_000;
    await waitFor('the new capability put', () => get('DERCapability').count === 2);
    expect(child(get('DERCapability').el, 'rtgMaxW')).toMatchObject({
      children: [
        { name: 'multiplier', text: '1' },
        { name: 'value', text: '5000' },
      ],
    });
    expect(server.invalid).toEqual([]);
  });

  it("posts the site's and the DER's readings as MirrorUsagePoints: average, maximum and minimum over each postRate", async () => {
    let n = 0;
    // the site imports 1000 W then 3000 W in turns, the DER delivers 2500 W at 230.4 V and 50.02 Hz
    const mirror = () => {
      n++;
      return {
        site: { powerW: n % 2 ? 1000 : 3000, voltageL1V: 230.4, frequencyHz: 50.02 },
        der: { powerW: 2500, powerL1W: 2500, voltageL1V: Number.NaN },
      };
    };
    const { server, client } = await start({ mirror });
    server.programs = [{ mRID: 'AA', primacy: 1, controls: [] }];
    server.mirrorPostRate = 2;
    client.start();
    const id = identityOfPem(readFileSync(pki.device.cert));
    await waitFor('two posts of readings to each point', () => {
      const m = [...server.mirrors.values()];
      return m.length === 2 && m.every((x) => x.posts >= 2);
    });
    const site = server.mirrors.get('/mup/1')!;
    const der = server.mirrors.get('/mup/2')!;
    // the points: the connection point and the DER, mRIDs ending in the configured PEN (62345 = F389)
    expect(site).toMatchObject({ lfdi: id.lfdi, roleFlags: '0003', mRID: clientMrid(id.lfdi, 'mup/site', 62345) });
    expect(der).toMatchObject({ roleFlags: '0049' });
    expect(site.mRID).toMatch(/^[0-9A-F]{24}0000F389$/);
    // every quantity told with its ReadingType once: 8 quantities × average, maximum, minimum
    expect(site.readingTypes.size).toBe(24);
    const typeOf = (m: typeof site, mRID: string) => {
      const t = m.readingTypes.get(mRID)!;
      return Object.fromEntries(t.children.map((c) => [c.name, Number(c.text)]));
    };
    const readingOf = (m: typeof site, key: string, stat: string) => {
      const mRID = clientMrid(id.lfdi, `mup/${m === site ? 'site' : 'der'}/${key}/${stat}`, 62345);
      return { type: typeOf(m, mRID), values: m.readings.filter((r) => r.mRID === mRID) };
    };
    const avg = readingOf(site, 'powerW', 'Avg');
    expect(avg.type).toMatchObject({ kind: 37, uom: 38, dataQualifier: 2, flowDirection: 1, phase: 0 });
    expect(readingOf(site, 'powerW', 'Max').values[0]!.value).toBe(3000);
    expect(readingOf(site, 'powerW', 'Min').values[0]!.value).toBe(1000);
    for (const r of avg.values) expect(r.value > 1000 && r.value < 3000, `average ${r.value}`).toBe(true);
    // each interval follows the one before, on the server's clock
    expect(avg.values[1]!.start).toBeGreaterThanOrEqual(avg.values[0]!.start + avg.values[0]!.duration - 1);
    const volts = readingOf(site, 'voltageL1V', 'Avg');
    expect(volts.type).toMatchObject({ uom: 29, phase: 129, powerOfTenMultiplier: -1 });
    expect(volts.values[0]!.value).toBe(2304);
    expect(readingOf(site, 'frequencyHz', 'Max').values[0]!.value).toBe(5002);
    // the DER's power flows the other way (19, reverse); a quantity never sampled is not posted
    expect(readingOf(der, 'powerL1W', 'Avg')).toMatchObject({ type: { flowDirection: 19, phase: 128 } });
    expect(readingOf(der, 'powerW', 'Avg').values[0]!.value).toBe(2500);
    expect(readingOf(der, 'voltageL1V', 'Avg').values).toEqual([]);
    expect(server.invalid).toEqual([]);
  });

  /** the site imports one more watt at every sample: an interval's minimum is the one after the last interval's maximum unless samples were lost */
  const counting = () => {
    let n = 0;
    return () => {
      n++;
      return { site: { powerW: n }, der: { powerW: 2500 } };
    };
  };
  const siteReadings = (point: MirrorState | undefined, lfdi: string) => {
    const of = (stat: string) => {
      const mRID = clientMrid(lfdi, `mup/site/powerW/${stat}`, 62345);
      return point?.readings.filter((r) => r.mRID === mRID) ?? [];
    };
    const min = of('Min');
    const max = of('Max');
    return min.map((r, i) => ({ min: r.value, max: max[i]!.value, start: r.start }));
  };

  /** a client posting a reading a second to a server with one program, two posted already */
  const posting = async (log?: Logger) => {
    const { server, client } = await start({ mirror: counting(), ...(log ? { log } : {}) });
    server.programs = [{ mRID: 'AA', primacy: 1, controls: [] }];
    server.mirrorPostRate = 1;
    client.start();
    const { lfdi } = client.identity;
    await waitFor(
      'readings posted to the site point',
      () => siteReadings(server.mirrors.get('/mup/1'), lfdi).length >= 2,
    );
    return { server, client, lfdi };
  };

  it('keeps the readings of each interval while the server is gone, at most 12, and posts them in order when it is back, the oldest dropped and said so', {
    timeout: 120_000,
  }, async () => {
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (l: string) => lines.push(l) });
    const { server, client, lfdi } = await posting(log);
    await server.down();
    await waitFor('the server seen gone', () => client.status().reachable === false, 30_000);
    const before = siteReadings(server.mirrors.get('/mup/1'), lfdi).length;
    // a second a reading: 12 wait, then the oldest go
    await waitFor('readings dropped', () => client.status().readingsDropped >= 4, 60_000);
    expect(client.status().readingsUnsent).toBe(12);
    const said = lines.map((l) => JSON.parse(l)).filter((l) => /oldest dropped/.test(l.msg));
    expect(said.length).toBeGreaterThan(0);
    expect(said.at(-1)!.droppedTotal).toBe(client.status().readingsDropped);
    // what the status page, /status.json and the uplink show, and health: this outage is losing data
    const lost = client.status().readingsDropped;
    expect(gridOperatorBody(client.status())).toMatchObject({ readingsUnsent: 12, readingsDropped: lost });
    expect(client.health().problems).toContainEqual(
      expect.stringMatching(/^\d+ meter readings for the grid operator dropped: its server has been gone longer/),
    );
    await server.up();
    await waitFor(
      'the waiting readings posted',
      () => siteReadings(server.mirrors.get('/mup/1'), lfdi).length >= before + 13,
      30_000,
    );
    await waitFor('none waiting', () => client.status().readingsUnsent === 0);
    // the outage is over: health is clear again, the count of what was lost stays
    await waitFor('health clear', () => client.health().problems!.length === 0);
    expect(client.status().reachable).toBe(true);
    expect(gridOperatorBody(client.status())).toMatchObject({ readingsUnsent: 0 });
    expect(client.status().readingsDropped).toBeGreaterThanOrEqual(lost);
    const all = siteReadings(server.mirrors.get('/mup/1'), lfdi);
    // the point was not forgotten: no second one made
    expect(server.mirrors.size).toBe(2);
    // where the oldest were dropped, samples are missing between two readings ...
    expect(all[before]!.min, JSON.stringify(all.slice(before - 1, before + 1))).toBeGreaterThan(
      all[before - 1]!.max + 1,
    );
    // ... and everywhere else each reading's interval follows the one before it: in order, none lost
    for (let i = 1; i < all.length; i++)
      if (i !== before) expect(all[i]!.min, `reading ${i} of ${all.length}`).toBe(all[i - 1]!.max + 1);
    expect(server.invalid).toEqual([]);
  });

  it('makes a MirrorUsagePoint again when the server forgot it (404), and posts the readings it refused to the new one', async () => {
    const { server, client, lfdi } = await posting();
    const forgotten = server.mirrors.get('/mup/1')!;
    server.mirrors.delete('/mup/1');
    const made = await waitFor(
      'the site point made again',
      () => [...server.mirrors].find(([, m]) => m.mRID === forgotten.mRID)?.[0],
    );
    expect(made).not.toBe('/mup/1');
    await waitFor('readings on the new point', () => siteReadings(server.mirrors.get(made), lfdi).length >= 2);
    const old = siteReadings(forgotten, lfdi);
    const now = siteReadings(server.mirrors.get(made), lfdi);
    // the reading the server answered 404 for is the new point's first: no interval lost between the two
    expect(now[0]!.min).toBe(old.at(-1)!.max + 1);
    for (let i = 1; i < now.length; i++) expect(now[i]!.min).toBe(now[i - 1]!.max + 1);
    await waitFor('none waiting', () => client.status().readingsUnsent === 0);
    expect(server.invalid).toEqual([]);
  });

  it('reads every page of a list the server pages, and programs by primacy', async () => {
    const { server, client } = await start();
    server.pageMax = 2;
    const t = nowS();
    const later = (i: number) => ({
      mRID: `E${i}`,
      start: t + 3600 * (i + 1),
      duration: 60,
      limits: { exportW: 100 * i },
    });
    server.programs = [
      { mRID: 'F9', primacy: 9, controls: [0, 1, 2].map(later) },
      // the one in force is the fifth control of the second program, on its third page
      {
        mRID: 'F2',
        primacy: 2,
        controls: [3, 4, 5, 6, { mRID: 'E7', start: t - 10, duration: 600, limits: { importW: 7000 } }].map((c) =>
          typeof c === 'number' ? later(c) : c,
        ),
      },
      { mRID: 'F5', primacy: 5, controls: [{ mRID: 'E8', start: t - 10, duration: 600, limits: { importW: 100 } }] },
    ];
    client.start();
    await waitFor('the paged control in force', () => client.current()?.importW === 7000);
    expect(client.current()?.controlId).toBe('E7');
    expect(server.requests.filter((r) => r === 'GET /derp/1/derc').length).toBeGreaterThanOrEqual(3);
    await waitFor('E8 superseded', () =>
      server.responses.some((r) => r.subject === 'E8' && r.status === RESPONSE_STATUS.superseded),
    );
    expect(server.invalid).toEqual([]);
  });

  it(`agrees with a server that accepts only ${CCM8_SUITE}, and a server refuses a certificate of another CA`, async () => {
    // the server too needs security level 0 for CCM-8 on OpenSSL 3.2+ (Node 22, 24)
    const { server, client } = await start({ ciphers: `${CCM8_SUITE}:@SECLEVEL=0` });
    server.programs = [{ mRID: '7E1', primacy: 1, controls: [], defaultLimits: { exportW: 1234 } }];
    client.start();
    await waitFor('the default over CCM-8', () => client.current()?.exportW === 1234);
    await client.stop();
    await server.close();

    const rogue = await start({ device: pki.rogue });
    rogue.client.start();
    await waitFor('the refusal seen', () => rogue.client.status().lastError);
    expect(rogue.client.status()).toMatchObject({ reachable: false, endDevice: null });
    expect(rogue.client.status().lastError).toMatch(/^GRIDOP_UNREACHABLE/);
    expect(rogue.server.endDevices.size).toBe(0);
  });
});
