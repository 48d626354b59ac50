/**
 * A site for the Modbus proxy's attack tests: the one-connection Sungrow device
 * (one-master-device.ts) polled every second as the inverter `inv`, and `ports` proxy ports to it
 * with the default policy; and the raw request those tests send.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../src/core/log.js';
import { Daemon } from '../../src/main.js';
import { waitFor } from './demo.js';
import { fixtureSiteConfig } from './fixture-site.js';
import { freePort } from './free-port.js';
import { type OneConnectionDevice, startOneConnectionDevice } from './one-master-device.js';

export interface ProxySite {
  daemon: Daemon;
  device: OneConnectionDevice;
  ports: number[];
  stop(): Promise<void>;
}

export async function startProxySite(ports = 1): Promise<ProxySite> {
  const device = await startOneConnectionDevice();
  const dataDir = mkdtempSync(join(tmpdir(), 'sitegw-proxy-'));
  const numbers: number[] = [];
  for (let i = 0; i < ports; i++) numbers.push(await freePort());
  const connection = { type: 'tcp', host: '127.0.0.1', port: device.port, unitId: 1 };
  const config = fixtureSiteConfig({
    id: 'proxy',
    name: 'Proxy site',
    dataDir,
    more: { poll: { intervalSeconds: 1 }, modbusProxy: numbers.map((port) => ({ port, target: 'inv' })) },
    devices: [{ id: 'inv', role: 'inverter', profile: 'sungrow-sh-rt', connection }],
  });
  const daemon = await Daemon.start({ config, log: silentLogger() });
  await waitFor('inv online', () => daemon.site.devices.get('inv')?.online);
  return {
    daemon,
    device,
    ports: numbers,
    stop: async () => {
      await daemon.stop();
      await device.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** an FC4 request of unit 1 (MBAP, Messaging on TCP/IP Implementation Guide V1.0b) */
export function fc4Request(tid: number, address: number, quantity: number): Buffer {
  const b = Buffer.alloc(12);
  b.writeUInt16BE(tid & 0xffff, 0);
  b.writeUInt16BE(0, 2);
  b.writeUInt16BE(6, 4);
  b[6] = 1;
  b[7] = 4;
  b.writeUInt16BE(address, 8);
  b.writeUInt16BE(quantity, 10);
  return b;
}
