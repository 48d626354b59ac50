/**
 * The Modbus proxy (docs/modbus-proxy.md) against a device that takes one connection only
 * (test/support/one-master-device.ts, not the simulator): sitegw polls it every second while
 * three third-party masters of three kinds (Debian's mbpoll, pymodbus, modbus-serial) read it
 * through the proxy. Every client gets the device's values, the device sees one connection, and
 * no poll of sitegw's overran its period. Writes: refused with exception 01 by default; with
 * `writes: allow` one reaches the device, but with control on never one to a control register.
 * Then hostile clients (garbage, a connection flood, one that never reads) are cut off while
 * sitegw's polling and API go on. Poll jitter over ten minutes: bench/modbus-proxy.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusPage } from '../../src/api/http/status-page.js';
import { silentLogger } from '../../src/core/log.js';
import { Daemon } from '../../src/main.js';
import { ModbusRTU } from '../../src/modbus/modbus-serial.js';
import { waitFor } from '../support/demo.js';
import { fixtureSiteConfig } from '../support/fixture-site.js';
import { freePort } from '../support/free-port.js';
import { HAVE_MBPOLL, HAVE_PYMODBUS, mbpollReads, mbpollWrite, pymodbus } from '../support/modbus-clients.js';
import { MAX_SOC, type OneConnectionDevice, startOneConnectionDevice } from '../support/one-master-device.js';
import { fc4Request } from '../support/proxy-site.js';

const HAVE_CLIENTS = HAVE_MBPOLL && HAVE_PYMODBUS;

/** 13049 'EMS mode selection' (document 13050): a register of Sungrow's control map */
const EMS_MODE = 13049;
/** what the image holds (test/fixtures/devices/sungrow-sh10rt-v112.yaml): 13023 battery level 654, 13024 SoH 985 */
const LEVEL_SOH = { address: 13022, values: [654, 985] };
/** 5000 device type code 0x0E0F */
const TYPE_CODE = { address: 4999, values: [0x0e0f] };

interface Site {
  daemon: Daemon;
  device: OneConnectionDevice;
  ports: { deny: number; allow: number };
  stop(): Promise<void>;
}

async function startSite(control: boolean): Promise<Site> {
  const device = await startOneConnectionDevice();
  const dataDir = mkdtempSync(join(tmpdir(), 'sitegw-proxy-'));
  const ports = { deny: await freePort(), allow: await freePort() };
  const connection = { type: 'tcp', host: '127.0.0.1', port: device.port, unitId: 1 };
  const config = fixtureSiteConfig({
    id: 'proxy',
    name: 'Proxy site',
    dataDir,
    more: {
      poll: { intervalSeconds: 1 },
      control: { enabled: control },
      modbusProxy: [
        { port: ports.deny, target: 'inv' },
        { port: ports.allow, target: 'inv', writes: 'allow' },
      ],
    },
    devices: [
      { id: 'inv', role: 'inverter', profile: 'sungrow-sh-rt', connection },
      { id: 'bat', role: 'battery', profile: 'sungrow-sh-rt', inverter: 'inv', connection },
      { id: 'grid', role: 'grid-meter', profile: 'sungrow-sh-rt', connection },
    ],
  });
  const daemon = await Daemon.start({ config, log: silentLogger() });
  await waitFor('inv online', () => daemon.site.devices.get('inv')?.online);
  return {
    daemon,
    device,
    ports,
    stop: async () => {
      await daemon.stop();
      await device.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** sitegw's own polls while `during` runs: each one's outcome, and the poller's overruns. */
async function pollsDuring<T>(
  site: Site,
  during: () => Promise<T>,
): Promise<{ result: T; ok: number; failed: number; overruns: number }> {
  const { daemon } = site;
  let ok = 0;
  let failed = 0;
  const off = daemon.ctx.bus.on('devicePolled', (e) => {
    if (e.ok) ok++;
    else failed++;
  });
  const overrunsBefore = daemon.ctx.poller.overruns;
  try {
    const result = await during();
    // one more poll after the clients: proof the schedule ran on, whatever the machine's load
    const seen = ok;
    await waitFor('a poll after the clients', () => ok > seen);
    return { result, ok, failed, overruns: daemon.ctx.poller.overruns - overrunsBefore };
  } finally {
    off();
  }
}

async function modbusSerialReads(port: number, address: number, count: number, reads: number): Promise<number[][]> {
  const c = new ModbusRTU();
  c.on('error', () => undefined);
  await c.connectTCP('127.0.0.1', { port });
  c.setID(1);
  c.setTimeout(5000);
  const out: number[][] = [];
  try {
    for (let i = 0; i < reads; i++) {
      out.push((await c.readInputRegisters(address, count)).data);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await new Promise<void>((r) => c.close(() => r()));
  }
  return out;
}

describe.skipIf(!HAVE_CLIENTS)('the Modbus proxy, control on, a device that takes one connection', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite(true);
  });
  afterAll(async () => {
    await site?.stop();
  });

  it('three clients of three kinds read the device through the proxy while sitegw polls it every second', async () => {
    const { result, ok, failed, overruns } = await pollsDuring(site, () =>
      Promise.all([
        mbpollReads(site.ports.deny, LEVEL_SOH.address, 2, 8),
        pymodbus(site.ports.deny, TYPE_CODE.address, 1, 8),
        modbusSerialReads(site.ports.deny, LEVEL_SOH.address, 2, 8),
      ]),
    );
    const [mb, py, ms] = result;
    expect(mb).toEqual(Array(8).fill(LEVEL_SOH.values));
    expect(py.reads).toEqual(Array(8).fill(TYPE_CODE.values));
    expect(ms).toEqual(Array(8).fill(LEVEL_SOH.values));
    // the device never saw a second connection: every byte went over sitegw's one
    expect({ accepted: site.device.accepted, refused: site.device.refused }).toEqual({ accepted: 1, refused: 0 });
    // sitegw kept its schedule: its polls answered, none skipped for a poll still running
    expect(ok).toBeGreaterThan(0);
    expect({ failed, overruns }).toEqual({ failed: 0, overruns: 0 });
    const status = site.daemon.ctx.ops.status().modbusProxy.ports.find((p) => p.port === site.ports.deny)!;
    expect(status).toMatchObject({ target: 'inv', writes: 'deny' });
    // registers sitegw read in this poll period were answered from its read
    expect(status.answers.cached).toBeGreaterThan(0);
    // (mbpoll may send a ninth before it is stopped)
    expect(status.answers.cached + status.answers.forwarded).toBeGreaterThanOrEqual(24);
    expect(status.answers.failed + status.answers.exception + status.answers.refused).toBe(0);
    // the status page shows the port with what it answered
    const page = statusPage(site.daemon.ctx.ops.status());
    expect(page).toContain('<h2>Modbus proxy</h2>');
    expect(page).toContain(`127.0.0.1:${site.ports.deny}</td><td>inv</td><td>deny</td>`);
    expect(page).toContain(`${status.answers.forwarded} to the device, ${status.answers.cached} from sitegw's reads`);
    const metrics = await site.daemon.ctx.ops.metrics.text();
    expect(metrics).toMatch(
      /sitegw_modbus_proxy_requests_total\{device="inv",port="\d+",client="127\.0\.0\.1",outcome="cached"\} [1-9]/,
    );
  });

  it('a write is refused with exception 01 by default, and the device is not written', async () => {
    const before = site.device.seen.filter((r) => r.fn === 6 || r.fn === 16).length;
    const mb = await mbpollWrite(site.ports.deny, MAX_SOC.address, 950);
    expect(mb.code).not.toBe(0);
    expect(mb.out).toMatch(/Illegal function/i);
    const py = await pymodbus(site.ports.deny, TYPE_CODE.address, 1, 1, { address: MAX_SOC.address, value: 950 });
    expect(py.write).toEqual({ exception: 1 });
    expect(site.device.regs.holding.get(MAX_SOC.address)).toBe(MAX_SOC.factory);
    // control's own writes (self-consumption at start) may come; none of them at 13057
    expect(site.device.seen.slice(before).filter((r) => r.address === MAX_SOC.address && r.fn >= 6)).toEqual([]);
  });

  it('with writes: allow a write reaches the device, but never one to a control register while control is on', async () => {
    const refused = await mbpollWrite(site.ports.allow, EMS_MODE, 2);
    expect(refused.code).not.toBe(0);
    expect(refused.out).toMatch(/Illegal function/i);
    expect(site.device.regs.holding.get(EMS_MODE)).toBe(0);
    expect(site.device.seen.filter((r) => r.address === EMS_MODE && r.fn >= 6 && r.fn !== 3)).toEqual([]);
    const allowed = await mbpollWrite(site.ports.allow, MAX_SOC.address, 950);
    expect(allowed.code, allowed.out).toBe(0);
    expect(site.device.regs.holding.get(MAX_SOC.address)).toBe(950);
    expect(site.device.accepted).toBe(1);
  });
});

/** a socket to the proxy; resolves with how it ended: closed by the proxy (true) or still open after `settleMs` */
function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1' }, () => resolve(s));
    s.on('error', () => undefined);
    s.once('error', reject);
  });
}
const closed = (s: net.Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())));

/** an FC4 request of 125 registers at 13000 */
const readRequest = (tid: number) => fc4Request(tid, 13000, 125);

describe.skipIf(!HAVE_CLIENTS)('hostile clients on the proxy port', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite(true);
  });
  afterAll(async () => {
    await site?.stop();
  });

  it('garbage, a connection flood and a client that never reads are cut off; polling and the API go on', async () => {
    const port = site.ports.deny;
    const writesBefore = site.device.seen.length;
    const { result, failed, overruns } = await pollsDuring(site, async () => {
      // bytes that are not Modbus TCP (protocol id 0x4745: 'GET / HTTP')
      const garbage = await connect(port);
      garbage.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      await closed(garbage);
      // a connection flood from one address: it keeps its share (4 clients), each newcomer past it
      // taking the place of its own idle oldest, so the other 36 are closed at once
      const flood = await Promise.all(Array.from({ length: 40 }, () => connect(port)));
      const gone = () => {
        const e = site.daemon.ctx.ops.status().modbusProxy.ports[0]!.ended;
        return e.full + e['gave-way'];
      };
      await waitFor('the flood refused', () => gone() >= 36);
      // a client that sends and never reads: 2,000 pipelined reads in one go
      for (const s of flood) s.destroy();
      await waitFor('the flood gone', () => site.daemon.ctx.ops.status().modbusProxy.ports[0]!.clients.length === 0);
      const deaf = await connect(port);
      deaf.pause();
      deaf.write(Buffer.concat(Array.from({ length: 2000 }, (_, i) => readRequest(i))));
      await closed(deaf);
      // an honest client still gets its answers afterwards
      const after = await pymodbus(port, TYPE_CODE.address, 1, 2);
      const health = await fetch(`${site.daemon.url}/healthz`);
      return { after, health: health.status };
    });
    expect(result.after.reads).toEqual([TYPE_CODE.values, TYPE_CODE.values]);
    expect(result.health).toBe(200);
    const ended = site.daemon.ctx.ops.status().modbusProxy.ports[0]!.ended;
    expect(ended.garbage).toBe(1);
    expect(ended.full + ended['gave-way']).toBeGreaterThanOrEqual(36);
    expect(ended.flood + ended.unread).toBe(1);
    expect({ failed, overruns }).toEqual({ failed: 0, overruns: 0 });
    // nothing the hostile clients sent reached the device beyond what sitegw and the honest client read
    expect(site.device.seen.slice(writesBefore).every((r) => r.fn === 3 || r.fn === 4)).toBe(true);
    expect({ accepted: site.device.accepted, refused: site.device.refused }).toEqual({ accepted: 1, refused: 0 });
    const metrics = await site.daemon.ctx.ops.metrics.text();
    expect(metrics).toMatch(/sitegw_modbus_proxy_disconnects_total\{[^}]*reason="garbage"\} 1/);
  });
});

describe.skipIf(!HAVE_CLIENTS)('the Modbus proxy, control off', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite(false);
  });
  afterAll(async () => {
    await site?.stop();
  });

  it('with writes: allow a write to what would be a control register reaches the device', async () => {
    const w = await mbpollWrite(site.ports.allow, EMS_MODE, 2);
    expect(w.code, w.out).toBe(0);
    expect(site.device.regs.holding.get(EMS_MODE)).toBe(2);
    expect(site.device.accepted).toBe(1);
  });
});
