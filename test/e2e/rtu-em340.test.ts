/**
 * A profile family that only exists on RS-485, end to end over Modbus RTU: the simulator serves a
 * Carlo Gavazzi EM340 grid meter (INT32 registers, low word first) on one end of a socat pty pair,
 * `sitegw scan` recognises it on a line of its own, and the daemon reads it through the
 * carlo-gavazzi-em profile as its grid meter. Register values the meter is made to answer with
 * (an override on the line) come out of the daemon with the EM340's scale, word order and sign.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanCommand } from '../../src/cli/scan.js';
import type { Reading } from '../../src/core/channels.js';
import { defaultSimConfig } from '../../src/sim/config.js';
import { type SimRtuServer, startSimRtuServer } from '../../src/sim/rtu-server.js';
import { partnerToken } from '../support/auth.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';
import { HAVE_SOCAT, type PtyPair, ptyPair } from '../support/socat.js';

const GRID = 'grid-meter__GRID_METER_DERIVED';

describe.skipIf(!HAVE_SOCAT)('a Carlo Gavazzi EM340 on an RS-485 line (Modbus RTU over a socat pty pair)', () => {
  let line: PtyPair;
  let scanLine: PtyPair;
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let rtu: SimRtuServer;
  let scanRtu: SimRtuServer;
  let token: string;
  const readings: Reading[] = [];

  beforeAll(async () => {
    [line, scanLine] = await Promise.all([ptyPair(), ptyPair()]);
    demo = await demoSite({
      speed: 60,
      start: Date.parse('2026-06-21T09:50:00Z'),
      sim: { ...defaultSimConfig(), gridMeter: 'em340' },
      configure: (config) => {
        const grid = config.devices.find((d) => d.id === 'grid-meter')!;
        grid.profile = 'carlo-gavazzi-em';
        grid.connection = {
          type: 'rtu',
          device: line.b,
          baudRate: 9600,
          parity: 'none',
          dataBits: 8,
          stopBits: 1,
          unitId: 1,
          timeoutMs: 300,
        };
      },
    });
    demo.daemon.ctx.bus.on('reading', (r) => readings.push(r));
    // the meter host's units on two lines: one the daemon polls, one only the scan talks on
    [rtu, scanRtu] = await Promise.all([
      startSimRtuServer(demo.sim, demo.clock, {
        path: line.a,
        host: 'meter',
        baudRate: 9600,
        faults: demo.servers.faults,
      }),
      startSimRtuServer(demo.sim, demo.clock, { path: scanLine.a, host: 'meter', baudRate: 9600 }),
    ]);
    token = await partnerToken(demo.credentials);
  });
  afterAll(async () => {
    await demo?.cleanup();
    await Promise.all([rtu?.close(), scanRtu?.close()]);
    await Promise.all([line?.close(), scanLine?.close()]);
  });

  it('sitegw scan finds it by its identification code and names the profile and model', async () => {
    const out: string[] = [];
    const code = await scanCommand(['--rtu', scanLine.b, '--baud', '9600', '--units', '1'], {
      out: (t) => out.push(t),
      err: () => undefined,
    });
    const text = out.join('');
    expect(code, text).toBe(0);
    const unit = text.split('\n').find((l) => l.trimStart().startsWith('unit 1 '));
    expect(unit, text).toContain('Carlo Gavazzi EM340DINAV23XS1X');
    expect(unit).toContain('profile carlo-gavazzi-em');
    expect(text).toContain('profile: carlo-gavazzi-em');
  });

  it('the daemon reads it over RTU: online, with the identity its registers give', async () => {
    await waitFor('grid meter online over RTU', () => demo.daemon.site.devices.get('grid-meter')!.online);
    const r = await getJson(`${demo.url}/api/v1/devices`, token);
    expect(r.status).toBe(200);
    const grid = r.body.devices.find((d: { deviceId: string }) => d.deviceId === 'grid-meter');
    expect(grid).toMatchObject({ online: true, manufacturer: 'Carlo Gavazzi', model: 'EM340DINAV23XS1X' });
  });

  it('register words on the line come out as the EM340 means them: W x 10 and kWh x 10, low word first, + import', async () => {
    // W sys -16,500 (0xFFFFBF8C: -1,650.0 W, exporting), Hz 500, kWh (+) TOT 456,789 (0x0006F855)
    const words = [0xbf8c, 0xffff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 500, 0xf855, 0x0006];
    const from = readings.length;
    rtu.faults.set('meter', 1, { kind: 'override', address: 0x0028, values: words });
    try {
      const r = await waitFor('a grid reading with the overridden registers', () =>
        readings.slice(from).find((x) => x.streamId === GRID && x.values.power_W === -1650),
      );
      expect(r.values.state).toBe('ok');
      expect(r.counters?.inWh).toBe(45_678_900);
    } finally {
      rtu.faults.clear('meter', 1);
    }
  });

  it('its readings reach a closed bucket of the telemetry API', async () => {
    const closed = Math.floor(demo.clock.now() / 900_000) * 900_000 + 900_000;
    await waitFor('a bucket closed after RTU readings', () => demo.clock.now() > closed + 30_000, 45_000);
    const interval = `${new Date(closed - 900_000).toISOString()}/${new Date(closed).toISOString()}`;
    const r = await getJson(
      `${demo.url}/api/v1/devices/${GRID}/telemetry?interval=${interval}&include=default,energy`,
      token,
    );
    expect(r.status).toBe(200);
    expect(r.body.entries).toHaveLength(1);
    expect(typeof r.body.entries[0].power_W).toBe('number');
    expect(r.body.entries[0].state).toBe('ok');
  });
});
