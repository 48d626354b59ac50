/**
 * A daemon on vendor control fixtures (test/fixtures/control/): each vendor's inverter is its
 * fixture device (the control registers, written from the vendor's document), its battery one of
 * the simulator's SunSpec blocks (state of charge and power, which a charge waits for), and the
 * grid meter the simulator's. At most two vendors: the simulator has two blocks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScaledClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/log.js';
import { Daemon } from '../../src/main.js';
import { defaultSimConfig } from '../../src/sim/config.js';
import { startSimServers } from '../../src/sim/servers.js';
import { SimSite } from '../../src/sim/site.js';
import { type ControlDevice, loadControlFixture, startControlDevice } from './control-device.js';
import { fixtureSiteConfig } from './fixture-site.js';

export interface VendorSite {
  daemon: Daemon;
  /** each vendor's fixture device; its inverter is `inv-<vendor>`, its battery `bat-<vendor>` */
  devices: Map<string, ControlDevice>;
  close(): Promise<void>;
}

export async function startVendorSite(o: {
  id: string;
  name: string;
  vendors: readonly string[];
  start: number;
  speed: number;
  /** site.yaml keys beside devices (poll, control, tariff, …) */
  more: Record<string, unknown>;
}): Promise<VendorSite> {
  const dataDir = mkdtempSync(join(tmpdir(), `sitegw-${o.id}-`));
  const clock = new ScaledClock(o.speed, o.start);
  const sim = new SimSite(defaultSimConfig(), clock.now());
  const servers = await startSimServers(sim, clock, { host: '127.0.0.1' });
  const devices = new Map<string, ControlDevice>();
  const entries: object[] = [];
  for (const [j, v] of o.vendors.entries()) {
    const f = loadControlFixture(v);
    const d = await startControlDevice(f);
    devices.set(v, d);
    entries.push(
      {
        id: `inv-${v}`,
        role: 'inverter',
        profile: f.profile,
        connection: { type: 'tcp', host: d.host, port: d.port, unitId: f.unitId },
      },
      {
        id: `bat-${v}`,
        role: 'battery',
        profile: 'sunspec',
        inverter: `inv-${v}`,
        connection: { type: 'tcp', host: servers.inverter.host, port: servers.inverter.port, unitId: j + 2 },
      },
    );
  }
  entries.push({
    id: 'grid-meter',
    role: 'grid-meter',
    profile: 'sunspec',
    connection: { type: 'tcp', host: servers.meter.host, port: servers.meter.port, unitId: 1 },
  });
  const config = fixtureSiteConfig({ id: o.id, name: o.name, dataDir, devices: entries, more: o.more });
  const daemon = await Daemon.start({ config, clock, log: silentLogger() });
  return {
    daemon,
    devices,
    async close() {
      await daemon.stop();
      for (const d of devices.values()) await d.close();
      await servers.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
