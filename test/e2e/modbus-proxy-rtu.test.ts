/**
 * An RS-485 line shared through the Modbus proxy (docs/modbus-proxy.md): the Sungrow image of
 * test/support/one-master-device.ts as unit 1 on one end of a socat pty pair, sitegw the line's
 * one master on the other, polling every second; mbpoll and pymodbus read it through the proxy's
 * Modbus TCP port and a write with `writes: allow` reaches the unit over RTU.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { Daemon } from '../../src/main.js';
import { waitFor } from '../support/demo.js';
import { fixtureSiteConfig } from '../support/fixture-site.js';
import { freePort } from '../support/free-port.js';
import { HAVE_MBPOLL, HAVE_PYMODBUS, mbpollReads, mbpollWrite, pymodbus } from '../support/modbus-clients.js';
import { type LineDevice, MAX_SOC, startLineDevice } from '../support/one-master-device.js';
import { HAVE_SOCAT, type PtyPair, ptyPair } from '../support/socat.js';

describe.skipIf(!HAVE_SOCAT || !HAVE_MBPOLL || !HAVE_PYMODBUS)('the Modbus proxy on an RS-485 line (socat)', () => {
  let line: PtyPair;
  let device: LineDevice;
  let daemon: Daemon;
  let dataDir: string;
  let port: number;

  beforeAll(async () => {
    line = await ptyPair();
    device = await startLineDevice(line.a);
    dataDir = mkdtempSync(join(tmpdir(), 'sitegw-proxy-rtu-'));
    port = await freePort();
    const connection = {
      type: 'rtu',
      device: line.b,
      baudRate: 19200,
      parity: 'even',
      stopBits: 1,
      unitId: 1,
      timeoutMs: 500,
    };
    const config = fixtureSiteConfig({
      id: 'proxy-rtu',
      name: 'Proxy on a line',
      dataDir,
      more: { poll: { intervalSeconds: 1 }, modbusProxy: [{ port, target: 'inv', writes: 'allow' }] },
      devices: [
        { id: 'inv', role: 'inverter', profile: 'sungrow-sh-rt', connection },
        { id: 'bat', role: 'battery', profile: 'sungrow-sh-rt', inverter: 'inv', connection },
      ],
    });
    daemon = await Daemon.start({ config, log: silentLogger() });
    await waitFor('inv online', () => daemon.site.devices.get('inv')?.online);
  });
  afterAll(async () => {
    await daemon?.stop();
    await device?.close();
    await line?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('two clients read the unit through the proxy while sitegw polls the line, and a write reaches it', async () => {
    let failed = 0;
    const off = daemon.ctx.bus.on('devicePolled', (e) => void (e.ok ? undefined : failed++));
    const overruns = daemon.ctx.poller.overruns;
    const [mb, py] = await Promise.all([mbpollReads(port, 13022, 2, 6), pymodbus(port, 4999, 1, 6)]);
    off();
    expect(mb).toEqual(Array(6).fill([654, 985]));
    expect(py.reads).toEqual(Array(6).fill([0x0e0f]));
    expect({ failed, overruns: daemon.ctx.poller.overruns - overruns }).toEqual({ failed: 0, overruns: 0 });
    const w = await mbpollWrite(port, MAX_SOC.address, 900);
    expect(w.code, w.out).toBe(0);
    expect(device.regs.holding.get(MAX_SOC.address)).toBe(900);
    expect(daemon.site.devices.get('inv')?.online).toBe(true);
  });
});
