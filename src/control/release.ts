/**
 * `sitegw control release`: every storage system of site.yaml back to its own self-consumption,
 * from a process of its own. The unit runs it after any exit of the daemon (`ExecStopPost=`), so
 * a command of a device without a revert timer (a keep-alive device) ends even after a crash or
 * a watchdog kill (docs/control.md "Fail-safe").
 */
import type { SiteConfig } from '../config/types.js';
import { BusRegistry } from '../modbus/buses.js';
import { storageControlFor } from '../profiles/storage-controls.js';
import { Site } from '../site/site.js';

export interface Released {
  deviceId: string;
  ok: boolean;
  /** registers written, or why not */
  detail: string;
}

export async function releaseStorage(config: SiteConfig): Promise<Released[]> {
  const site = new Site(config);
  const storages = site.byRole('inverter').filter((d) => site.batteriesOf(d.config.id).length > 0);
  const buses = new BusRegistry();
  try {
    return await Promise.all(
      storages.map(async (d): Promise<Released> => {
        const bus = buses.readerFor(d.config);
        try {
          const batteries = site.batteriesOf(d.config.id).map((x) => x.config);
          const control = await storageControlFor(d.config, bus, config.control.revertSeconds, undefined, batteries);
          if (!control)
            return { deviceId: d.config.id, ok: true, detail: 'offers no storage control: nothing to release' };
          const writes = await control.apply(bus, { mode: 'self-consumption' });
          const refused = writes.find((w) => w.values.some((v, i) => w.readBack[i] !== v));
          if (refused)
            return {
              deviceId: d.config.id,
              ok: false,
              detail: `register ${refused.address} read back ${refused.readBack.join(',')} after writing ${refused.values.join(',')}`,
            };
          return {
            deviceId: d.config.id,
            ok: true,
            detail: `self-consumption (${writes.map((w) => `${w.address}=${w.values.join(',')}`).join(' ') || 'already'})`,
          };
        } catch (err) {
          return { deviceId: d.config.id, ok: false, detail: err instanceof Error ? err.message : String(err) };
        }
      }),
    );
  } finally {
    await buses.close();
  }
}
