/** `sitegw scan` against the simulator: over TCP, and over RTU on a socat pty pair. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTcpTarget, scanCommand } from '../../src/cli/scan.js';
import { ManualClock } from '../../src/core/clock.js';
import { parseUnits, scanBus } from '../../src/discovery/scan.js';
import { formatScanReport, siteYamlSnippet } from '../../src/discovery/scan-report.js';
import { SerialLink } from '../../src/modbus/byte-link.js';
import { RtuBus } from '../../src/modbus/rtu-bus.js';
import { TcpBus } from '../../src/modbus/tcp-bus.js';
import { installedProfiles } from '../../src/profiles/registry.js';
import { parseConfig } from '../../src/profiles/site-config.js';
import { defaultSimConfig } from '../../src/sim/config.js';
import { startSimRtuServer } from '../../src/sim/rtu-server.js';
import { type SimServers, startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { HAVE_SOCAT, ptyPair } from '../support/socat.js';

const T0 = Date.parse('2026-06-21T10:00:00Z');
const profiles = [...installedProfiles().profiles.values()];
const SITE_HEAD = [
  'site:',
  '  id: home',
  '  name: Home',
  '  timezone: Europe/Berlin',
  '  currency: EUR',
  '  location: { latitude: 52.5, longitude: 13.4 }',
];

/** the snippet must be a valid devices: section as it stands */
function expectValidSnippet(snippet: string) {
  const r = parseConfig(`${SITE_HEAD.join('\n')}\n${snippet}`, 'snippet.yaml', '/tmp');
  if (!r.ok) throw new Error(`snippet is not valid site.yaml:\n${snippet}\n${JSON.stringify(r.errors, null, 2)}`);
  return r.config;
}

describe('scan over Modbus TCP', () => {
  const sim = new SimSite({ ...defaultSimConfig(), gridMeter: 'sdm630' }, T0);
  let servers: SimServers;
  beforeAll(async () => {
    servers = await startSimServers(sim, new ManualClock(T0));
  });
  afterAll(async () => {
    await servers?.close();
  });

  it('finds the inverter and its two battery blocks by SunSpec, with their identity and models', async () => {
    const bus = new TcpBus({ host: servers.inverter.host, port: servers.inverter.port, timeoutMs: 500 });
    try {
      const r = await scanBus(bus, { units: parseUnits('1-6'), profiles });
      expect(r.found.map((f) => [f.unitId, f.profile, f.roles[0]])).toEqual([
        [1, 'sunspec', 'inverter'],
        [2, 'sunspec', 'battery'],
        [3, 'sunspec', 'battery'],
      ]);
      const ids = sim.identities();
      expect(r.found[0]!.identity).toMatchObject({
        manufacturer: 'sitegw-sim',
        serial: ids.find((d) => d.role === 'inverter')!.serial,
      });
      expect(r.found[0]!.models).toEqual([1, 103, 160, 124]);
      expect(r.found[1]!.models).toEqual([1, 802]);
      // the simulated gateway says "no device" (exception 11) for the rest: one request each
      expect(r.silent).toEqual([4, 5, 6]);
      const config = expectValidSnippet(
        siteYamlSnippet(r, { type: 'tcp', host: servers.inverter.host, port: servers.inverter.port }),
      );
      expect(config.devices.map((d) => [d.id, d.role, d.connection.unitId])).toEqual([
        ['inverter-1', 'inverter', 1],
        ['battery-2', 'battery', 2],
        ['battery-3', 'battery', 3],
      ]);
    } finally {
      await bus.close();
    }
  });

  it('finds the SDM630 by its profile and the SunSpec meter beside it; prints a ready snippet', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await scanCommand(['--tcp', `${servers.meter.host}:${servers.meter.port}`, '--units', '1-4'], {
      out: (t) => out.push(t),
      err: (t) => err.push(t),
    });
    expect(code).toBe(0);
    const text = out.join('');
    expect(text).toMatch(/unit 1 +Eastron SDM630, serial \d+, profile eastron-sdm630/);
    expect(text).toMatch(/unit 2 +sitegw-sim EM3-LOAD, serial CM-[0-9A-F]{8}, SunSpec models 1, 203/);
    expect(text).toMatch(/No answer from unit ids 3-4\./);
    expect(err.join('')).toMatch(/Scanning 127\.0\.0\.1:\d+ \(Modbus TCP\), unit ids 1-4/);
    const snippet = text.slice(text.indexOf('\ndevices:') + 1);
    const config = expectValidSnippet(snippet);
    // one grid meter per site: the second meter is offered as the consumption meter
    expect(config.devices.map((d) => [d.profile, d.role])).toEqual([
      ['eastron-sdm630', 'grid-meter'],
      ['sunspec', 'consumption-meter'],
    ]);
  });

  it('a device that answers on every unit id is listed once', async () => {
    // a direct TCP device ignoring the unit id looks like the same serial at every id
    const bus = new TcpBus({ host: servers.inverter.host, port: servers.inverter.port, timeoutMs: 500 });
    const echoing = {
      readHolding: (_u: number, a: number, n: number) => bus.readHolding(1, a, n),
      readInput: (_u: number, a: number, n: number) => bus.readInput(1, a, n),
    };
    try {
      const r = await scanBus(echoing, { units: [1, 2, 3, 4], profiles });
      expect(r.found).toHaveLength(1);
      expect(r.found[0]).toMatchObject({ unitId: 1, alsoAt: [2, 3, 4] });
      expect(formatScanReport(r, { type: 'tcp', host: 'h', port: 502 })).toMatch(/answers on unit ids 2-4 too/);
    } finally {
      await bus.close();
    }
  });

  it('a vendor map next to a SunSpec inverter becomes a second entry on the unit, in a role of its own, and the snippet stays valid', () => {
    const inverter = {
      unitId: 1,
      alsoAt: [],
      family: 'sunspec' as const,
      profile: 'sunspec',
      identity: { manufacturer: 'KOSTAL' },
      models: [1, 103, 160, 802],
      roles: ['inverter' as const],
    };
    const r = {
      found: [
        {
          ...inverter,
          beside: [
            {
              profile: 'kostal-plenticore-modbus',
              identity: { manufacturer: 'KOSTAL', model: 'PLENTICORE plus' },
              roles: ['inverter' as const, 'battery' as const, 'grid-meter' as const],
            },
          ],
        },
      ],
      silent: [],
      unknown: [],
      failed: [],
      requests: 0,
      answered: [],
    };
    const link = { type: 'tcp' as const, host: '192.168.1.80', port: 1502 };
    expect(formatScanReport(r, link)).toMatch(
      /\n {12}and next to its SunSpec map: KOSTAL PLENTICORE plus, no serial, profile kostal-plenticore-modbus \(inverter, battery, grid-meter\)\n/,
    );
    const config = expectValidSnippet(siteYamlSnippet(r, link));
    expect(config.devices.map((d) => [d.role, d.profile])).toEqual([
      ['inverter', 'sunspec'],
      ['battery', 'kostal-plenticore-modbus'],
    ]);
  });

  it('usage mistakes and an unreachable link exit 2 with one line', async () => {
    const run = async (argv: string[]) => {
      const err: string[] = [];
      const code = await scanCommand(argv, { out: () => undefined, err: (t) => err.push(t) });
      return { code, err: err.join('') };
    };
    expect(await run([])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/either --tcp HOST\[:PORT\] or --rtu DEVICE --baud N/),
    });
    expect(await run(['--rtu', '/dev/ttyUSB0'])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/--rtu needs --baud N/),
    });
    expect(await run(['--tcp', 'h', '--baud', '9600'])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/--baud applies to --rtu only/),
    });
    expect(await run(['--tcp', 'h', '--units', '1-300'])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/outside 0\.\.247/),
    });
    expect(await run(['--rtu', '/dev/x', '--baud', '9600', '--units', '0-3'])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/0 is the broadcast address/),
    });
    const missing = await run([
      '--rtu',
      '/dev/sitegw-no-such-adapter',
      '--baud',
      '9600',
      '--units',
      '1-247',
      '--timeout',
      '50',
    ]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/cannot open \/dev\/sitegw-no-such-adapter.*(No such file|ENOENT)/);
  });

  it('parses unit lists and TCP targets', () => {
    expect(parseUnits('1-3,7, 5')).toEqual([1, 2, 3, 5, 7]);
    expect(() => parseUnits('a')).toThrow(/not a unit id or a range/);
    expect(() => parseUnits('9-3')).toThrow(/backwards/);
    expect(parseTcpTarget('192.168.1.5')).toEqual({ host: '192.168.1.5', port: 502 });
    expect(parseTcpTarget('gw.local:1502')).toEqual({ host: 'gw.local', port: 1502 });
    expect(parseTcpTarget('[fe80::1]:503')).toEqual({ host: 'fe80::1', port: 503 });
    expect(parseTcpTarget('fe80::1')).toEqual({ host: 'fe80::1', port: 502 });
    expect(() => parseTcpTarget('h:70000')).toThrow(/port 70000/);
  });
});

describe.skipIf(!HAVE_SOCAT)('scan over Modbus RTU (socat pty pair)', () => {
  // a short timeout where nothing answers; where devices do, room for a loaded test machine
  const rtuBus = (device: string, timeoutMs = 300) =>
    new RtuBus({
      name: `rtu:${device}`,
      link: () => new SerialLink({ device, baudRate: 9600, parity: 'none', dataBits: 8, stopBits: 1 }),
      timeoutMs,
      interFrameDelayMs: 4,
      settleMs: 2,
      settleAfterTimeoutMs: 2,
      backoff: { failuresBeforeBackoff: Number.POSITIVE_INFINITY },
    });

  it('a sweep of 1..247 on a line where nothing answers completes, one request per unit id', async () => {
    const line = await ptyPair();
    // the far end reads every request and answers none (a pty nobody reads would fill up and block)
    const listener = new SerialLink({ device: line.a, baudRate: 9600, parity: 'none', dataBits: 8, stopBits: 1 });
    await listener.open();
    const bus = rtuBus(line.b, 25);
    try {
      const r = await scanBus(bus, { units: parseUnits('1-247'), profiles });
      expect(r.found).toEqual([]);
      expect(r.silent).toHaveLength(247);
      expect(r.requests).toBe(247);
      expect(formatScanReport(r, { type: 'rtu', device: line.b, baudRate: 9600, parity: 'none', stopBits: 1 })).toMatch(
        /No device found\.\nNo answer from unit ids 1-247\./,
      );
    } finally {
      await bus.close();
      await listener.close();
      await line.close();
    }
  });

  it('finds exactly the two meters on a line and nothing at the other unit ids', async () => {
    const line = await ptyPair();
    const sim = new SimSite({ ...defaultSimConfig(), gridMeter: 'sdm630' }, T0);
    const server = await startSimRtuServer(sim, new ManualClock(T0), { path: line.a, host: 'meter' });
    const bus = rtuBus(line.b);
    try {
      const r = await scanBus(bus, { units: parseUnits('1-12'), profiles });
      expect(r.found.map((f) => [f.unitId, f.profile])).toEqual([
        [1, 'eastron-sdm630'],
        [2, 'sunspec'],
      ]);
      expect(r.silent).toEqual(parseUnits('3-12'));
      expect(r.unknown).toEqual([]);
      expect(r.failed).toEqual([]);
      const config = expectValidSnippet(
        siteYamlSnippet(r, { type: 'rtu', device: line.b, baudRate: 9600, parity: 'none', stopBits: 1 }),
      );
      expect(config.devices.map((d) => d.connection)).toMatchObject([
        { type: 'rtu', device: line.b, unitId: 1 },
        { type: 'rtu', device: line.b, unitId: 2 },
      ]);
    } finally {
      await bus.close();
      await server.close();
      await line.close();
    }
  });

  it('a unit answering garbage is reported as a wiring or settings problem, not as absent', async () => {
    const line = await ptyPair();
    const sim = new SimSite({ ...defaultSimConfig(), gridMeter: 'sdm630' }, T0);
    const server = await startSimRtuServer(sim, new ManualClock(T0), { path: line.a, host: 'meter' });
    server.faults.set('meter', 2, { kind: 'garbage' });
    const bus = rtuBus(line.b);
    try {
      const r = await scanBus(bus, { units: [2], profiles });
      expect(r.failed.map((f) => [f.unitId, f.error.kind])).toEqual([[2, 'crc']]);
      expect(formatScanReport(r, { type: 'rtu', device: line.b, baudRate: 9600, parity: 'none', stopBits: 1 })).toMatch(
        /garbled answers: check baud rate, parity, A\/B wiring and termination/,
      );
    } finally {
      await bus.close();
      await server.close();
      await line.close();
    }
  });
});
