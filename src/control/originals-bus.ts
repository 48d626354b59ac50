/**
 * A bus that keeps, before control first writes a register range, the value the device held
 * there (the `control_originals` table), so `sitegw control release` can put back everything a
 * plan changed, even after a crash of the daemon that changed it (docs/control.md "Fail-safe").
 * The first value is the one kept: later writes of the same range do not replace it.
 */
import type { Database } from 'better-sqlite3';
import type { RegisterReader } from '../core/register-reader.js';
import type { RegisterWriter } from '../core/storage-control.js';
import { hasOriginal, recordOriginal } from '../store/control.js';

export function originalsBus(
  real: RegisterReader & RegisterWriter,
  db: Database,
  deviceId: string,
  now: () => number,
): RegisterReader & RegisterWriter {
  return {
    readHolding: (u, a, n) => real.readHolding(u, a, n),
    readInput: (u, a, n) => real.readInput(u, a, n),
    async writeHolding(u, a, values) {
      if (!hasOriginal(db, deviceId, u, a, values.length))
        recordOriginal(db, deviceId, u, a, await real.readHolding(u, a, values.length), now());
      await real.writeHolding(u, a, values);
    },
  };
}
