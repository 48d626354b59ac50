/**
 * End to end over Modbus RTU: the simulator serves its meter host (an Eastron SDM630 grid meter at
 * unit 1, a SunSpec consumption meter at unit 2) on one end of a socat pty pair, the daemon reads
 * both meters through the other end as its RS-485 line, and everything is checked through the
 * HTTP API and Site health. Then faults on the line and on the inverter's TCP link, each of which
 * must end in a named error count and a recovering poller, with no stale value presented as new.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceConnection } from '../../src/config/types.js';
import type { Reading } from '../../src/core/channels.js';
import { defaultSimConfig } from '../../src/sim/config.js';
import type { MeterDevice } from '../../src/sim/device-images.js';
import type { SimFault } from '../../src/sim/faults.js';
import { type SimRtuServer, startSimRtuServer } from '../../src/sim/rtu-server.js';
import { partnerToken } from '../support/auth.js';
import { demoSite, getJson, waitFor } from '../support/demo.js';
import { HAVE_SOCAT, type PtyPair, ptyPair } from '../support/socat.js';

const GRID = 'grid-meter__GRID_METER_DERIVED';
const HOUSE = 'house-meter';

describe.skipIf(!HAVE_SOCAT)('meters on an RS-485 line (Modbus RTU over a socat pty pair)', () => {
  let line: PtyPair;
  let demo: Awaited<ReturnType<typeof demoSite>>;
  let rtu: SimRtuServer;
  let token: string;
  const readings: Reading[] = [];

  const rtuConnection = (device: string, unitId: number): DeviceConnection => ({
    type: 'rtu',
    device,
    baudRate: 19200,
    parity: 'even',
    dataBits: 8,
    stopBits: 1,
    unitId,
    timeoutMs: 300,
  });
  const health = (id: string) => demo.daemon.site.devices.get(id)!;
  const apiDevice = async (id: string) => {
    const r = await getJson(`${demo.url}/api/v1/devices`, token);
    expect(r.status).toBe(200);
    return r.body.devices.find((d: { deviceId: string }) => d.deviceId === id);
  };

  /** Inject a fault on a meter unit, wait for the named error count to grow and the device to go offline, clear it, wait for it to come back. */
  async function faultAndRecover(
    id: string,
    unitId: number,
    fault: SimFault,
    kind: 'timeout' | 'exception' | 'crc' | 'protocol',
  ) {
    const before = health(id).errors[kind];
    rtu.faults.set('meter', unitId, fault);
    await waitFor(`${id} ${kind} counted`, () => health(id).errors[kind] > before && !health(id).online);
    // from the first failed poll on (one that began before the fault may still have ended well)
    const from = readings.length;
    await waitFor(`${id} failing for a while`, () => health(id).errors[kind] > before + 1);
    const during = readings.length;
    rtu.faults.clear('meter', unitId);
    await waitFor(`${id} back online`, () => health(id).online);
    return { from, during };
  }

  beforeAll(async () => {
    line = await ptyPair();
    demo = await demoSite({
      speed: 60,
      start: Date.parse('2026-06-21T09:50:00Z'),
      sim: { ...defaultSimConfig(), gridMeter: 'sdm630' },
      configure: (config) => {
        for (const d of config.devices) {
          if (d.id === 'grid-meter') {
            d.profile = 'eastron-sdm630';
            d.connection = rtuConnection(line.b, 1);
          }
          if (d.id === HOUSE) d.connection = rtuConnection(line.b, 2);
        }
      },
    });
    demo.daemon.ctx.bus.on('reading', (r) => readings.push(r));
    rtu = await startSimRtuServer(demo.sim, demo.clock, {
      path: line.a,
      host: 'meter',
      baudRate: 19200,
      parity: 'even',
      faults: demo.servers.faults,
    });
    token = await partnerToken(demo.credentials);
  });
  afterAll(async () => {
    await demo?.cleanup();
    await rtu?.close();
    await line?.close();
  });

  it('both meters come online over RTU with their identities in /api/v1/devices', async () => {
    await waitFor('meters online over RTU', () => health('grid-meter').online && health(HOUSE).online);
    const grid = await apiDevice('grid-meter');
    expect(grid).toMatchObject({ online: true, manufacturer: 'Eastron', kind: 'meter' });
    const house = await apiDevice(HOUSE);
    expect(house).toMatchObject({ online: true, manufacturer: 'sitegw-sim', model: 'EM3-LOAD' });
    expect(Object.keys(house.errors).sort()).toEqual([
      'connection',
      'crc',
      'decode',
      'exception',
      'protocol',
      'timeout',
    ]);
  });

  it('their readings reach the buckets and the telemetry API', async () => {
    await waitFor('grid meter readings', () =>
      readings.some((r) => r.streamId === GRID && r.values.power_W !== undefined),
    );
    // a 15-minute bucket at 60x closes every 15 s of real time
    const closed = Math.floor(demo.clock.now() / 900_000) * 900_000 + 900_000;
    await waitFor('a bucket closed after RTU readings', () => demo.clock.now() > closed + 30_000, 45_000);
    const interval = `${new Date(closed - 900_000).toISOString()}/${new Date(closed).toISOString()}`;
    for (const [stream, withState] of [
      [GRID, true],
      [HOUSE, false],
    ] as const) {
      const r = await getJson(
        `${demo.url}/api/v1/devices/${stream}/telemetry?interval=${interval}&include=default,energy`,
        token,
      );
      expect(r.status).toBe(200);
      expect(r.body.entries, stream).toHaveLength(1);
      const e = r.body.entries[0];
      expect(typeof e.power_W).toBe('number');
      if (withState) expect(e.state).toBe('ok');
      else expect(e.power_W).toBeGreaterThan(0);
    }
  });

  it('garbage on the line: crc errors, no house-meter reading while it lasts, then readings again', async () => {
    const { from, during } = await faultAndRecover(HOUSE, 2, { kind: 'garbage' }, 'crc');
    expect(readings.slice(from, during).filter((r) => r.streamId === HOUSE)).toEqual([]);
    await waitFor('house readings again', () =>
      readings.slice(during).some((r) => r.streamId === HOUSE && (r.values.power_W ?? 0) > 0),
    );
    expect((await apiDevice(HOUSE)).errors.crc).toBeGreaterThan(0);
  });

  it('bad CRCs and cut-off frames count as crc too; a well-framed answer of the wrong length as protocol', async () => {
    await faultAndRecover(HOUSE, 2, { kind: 'bad-crc' }, 'crc');
    await faultAndRecover(HOUSE, 2, { kind: 'truncated' }, 'crc');
    await faultAndRecover(HOUSE, 2, { kind: 'short-count' }, 'protocol');
  });

  it('exception answers: counted with their code, and the grid state is unknown, not the last value', async () => {
    const { from, during } = await faultAndRecover('grid-meter', 1, { kind: 'exception', code: 4 }, 'exception');
    expect(health('grid-meter').exceptionCodes['4']).toBeGreaterThan(0);
    const silentTime = readings.slice(from, during).filter((r) => r.streamId === GRID);
    expect(silentTime.length).toBeGreaterThan(0);
    // while the meter refused, nothing but the unknown state went out for its stream
    for (const r of silentTime) expect(r.values).toEqual({ state: 'unknown' });
    await waitFor('grid state ok again', () =>
      readings.slice(during).some((r) => r.streamId === GRID && r.values.state === 'ok'),
    );
  });

  it('a unit that stops answering: timeouts, then it is read again when it answers', async () => {
    await faultAndRecover(HOUSE, 2, { kind: 'silent' }, 'timeout');
    expect((await apiDevice(HOUSE)).errors.timeout).toBeGreaterThan(0);
  });

  it('a not-implemented sentinel is an absent power, not -32768 W', async () => {
    const meter = demo.sim.devices.find((d) => d.identity.host === 'meter' && d.identity.unitId === 2) as MeterDevice;
    const w = meter.image.model(203).point('W').address;
    const from = readings.length;
    rtu.faults.set('meter', 2, { kind: 'override', address: w, values: [0x8000] });
    try {
      const r = await waitFor('a house reading with the sentinel', () =>
        readings.slice(from).find((x) => x.streamId === HOUSE),
      );
      expect(r.values.power_W).toBeUndefined();
      expect(health(HOUSE).online).toBe(true);
    } finally {
      rtu.faults.clear('meter', 2);
    }
    const next = readings.length;
    await waitFor('house power back', () =>
      readings.slice(next).some((x) => x.streamId === HOUSE && x.values.power_W !== undefined),
    );
  });

  it('the inverter on TCP: a socket reset mid-poll and a reboot are connection errors, and it recovers', async () => {
    const inverter = health('inverter');
    let before = inverter.errors.connection;
    demo.servers.faults.set('inverter', 1, { kind: 'reset' }, 1);
    await waitFor('reset counted', () => inverter.errors.connection > before);
    await waitFor('inverter online after the reset', () => inverter.online);
    before = inverter.errors.connection;
    const reboot = demo.servers.reboot('inverter', 1500);
    await waitFor('inverter offline while rebooting', () => !inverter.online && inverter.errors.connection > before);
    await reboot;
    await waitFor('inverter online after the reboot', () => inverter.online, 30_000);
    expect((await apiDevice('inverter')).errors.connection).toBeGreaterThan(before);
    // the meters on the RS-485 line kept being read all along
    expect(health('grid-meter').online && health(HOUSE).online).toBe(true);
  });
});
