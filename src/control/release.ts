/**
 * `sitegw control release`: every storage system of site.yaml back to its own self-consumption,
 * from a process of its own. The unit runs it after any exit of the daemon (`ExecStopPost=`), so
 * a command of a device without a revert timer (a keep-alive device) ends even after a crash or
 * a watchdog kill (docs/control.md "Fail-safe"). Then every other register control changed (a
 * SunSpec ChaGriSet, a vendor's remote-control mode, timeout or power limit) is put back to the
 * value it held before control first wrote it (`control_originals`), and each write is audited
 * in `control_writes` as the daemon's are. Without the database (a failed disk) self-consumption
 * is still written: only the restore and the audit need it.
 */
import type { Database } from 'better-sqlite3';
import type { SiteConfig } from '../config/types.js';
import type { RegisterWrite } from '../core/storage-control.js';
import { BusRegistry } from '../modbus/buses.js';
import { storageControlFor } from '../profiles/storage-controls.js';
import { Site } from '../site/site.js';
import { recordWrites } from '../store/control.js';
import { restoreOriginals } from './originals.js';

export interface Released {
  deviceId: string;
  ok: boolean;
  /** registers written, or why not */
  detail: string;
}

/** Who the audit names for release's writes. */
export const RELEASE_WRITER = 'release';

const same = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((v, i) => v === b[i]);
const refusedOf = (writes: readonly RegisterWrite[]) => writes.find((w) => !same(w.readBack, w.values));

export async function releaseStorage(
  config: SiteConfig,
  db?: Database,
  now: () => number = Date.now,
): Promise<Released[]> {
  const site = new Site(config);
  const storages = site.byRole('inverter').filter((d) => site.batteriesOf(d.config.id).length > 0);
  const buses = new BusRegistry();
  const audit = (deviceId: string, writes: readonly RegisterWrite[]) => {
    if (db && writes.length)
      recordWrites(
        db,
        writes.map((w) => ({
          atMs: now(),
          deviceId,
          writer: RELEASE_WRITER,
          address: w.address,
          values: w.values,
          readBack: w.readBack,
          dryRun: false,
        })),
      );
  };
  try {
    return await Promise.all(
      storages.map(async (d): Promise<Released> => {
        const id = d.config.id;
        const bus = buses.readerFor(d.config);
        try {
          const batteries = site.batteriesOf(id).map((x) => x.config);
          const control = await storageControlFor(d.config, bus, config.control.revertSeconds, undefined, batteries);
          if (!control) return { deviceId: id, ok: true, detail: 'offers no storage control: nothing to release' };
          const writes = await control.apply(bus, { mode: 'self-consumption' });
          audit(id, writes);
          const refused = refusedOf(writes);
          if (refused)
            return {
              deviceId: id,
              ok: false,
              detail: `register ${refused.address} read back ${refused.readBack.join(',')} after writing ${refused.values.join(',')}`,
            };
          const said = writes.map((w) => `${w.address}=${w.values.join(',')}`);
          if (db) {
            const restored = await restoreOriginals(db, id, bus, control);
            audit(
              id,
              restored.writes.map((r) => r.write),
            );
            said.push(...restored.writes.map((r) => `${r.write.address}=${r.write.values.join(',')} (restored)`));
            if (restored.failed) return { deviceId: id, ok: false, detail: `self-consumption; ${restored.failed}` };
          }
          return { deviceId: id, ok: true, detail: `self-consumption (${said.join(' ') || 'already'})` };
        } catch (err) {
          return { deviceId: id, ok: false, detail: err instanceof Error ? err.message : String(err) };
        }
      }),
    );
  } finally {
    await buses.close();
  }
}
