/**
 * Putting back what control changed on a device: every register range it wrote, to the value
 * the device held before control first wrote it (`control_originals`, kept by originals-bus.ts,
 * on disk so a crash does not lose it). `sitegw control release` puts back all of them; the
 * daemon, going back to self-consumption, those the control names (restoredWithSelfConsumption)
 * (docs/control.md "Fail-safe").
 */
import type { Database } from 'better-sqlite3';
import type { RegisterReader } from '../core/register-reader.js';
import type { RegisterWrite, RegisterWriter, StorageControl } from '../core/storage-control.js';
import { forgetOriginal, originalsOf } from '../store/control.js';

type Bus = RegisterReader & RegisterWriter;

const same = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((v, i) => v === b[i]);

/**
 * Puts back the originals of one device, in the order control first wrote them, on `bus` (the
 * device's own, not one that records originals); those put back are forgotten, so the next
 * command records the device's values afresh. Stops at a write the device reads back otherwise.
 * `only`: just the ranges that hold one of these registers of the control's unit.
 */
export async function restoreOriginals(
  db: Database,
  deviceId: string,
  bus: Bus,
  control: StorageControl,
  only?: readonly number[],
): Promise<{ writes: { unitId: number; write: RegisterWrite }[]; failed?: string }> {
  const own = new Set(control.selfConsumptionRegisters ?? []);
  const writes: { unitId: number; write: RegisterWrite }[] = [];
  for (const o of originalsOf(db, deviceId)) {
    const range = o.words.map((_, i) => o.address + i);
    if (only && !(o.unitId === control.unitId && range.some((a) => only.includes(a)))) continue;
    // self-consumption just set these: its value is the device's own logic, not the one before
    if (o.unitId === control.unitId && range.some((a) => own.has(a))) {
      forgetOriginal(db, o.id);
      continue;
    }
    const now = await bus.readHolding(o.unitId, o.address, o.words.length);
    if (!same(now, o.words)) {
      await bus.writeHolding(o.unitId, o.address, o.words);
      const readBack = await bus.readHolding(o.unitId, o.address, o.words.length);
      writes.push({ unitId: o.unitId, write: { address: o.address, values: o.words, readBack } });
      if (!same(readBack, o.words))
        return {
          writes,
          failed: `register ${o.address} read back ${readBack.join(',')} after restoring ${o.words.join(',')}`,
        };
    }
    forgetOriginal(db, o.id);
  }
  return { writes };
}
