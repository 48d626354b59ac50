/**
 * control.dryRun: a bus that takes writes into an overlay instead of sending them, and reads
 * written registers back from it, so the storage control computes and the audit records exactly
 * the writes it would make while no write reaches the device.
 */
import type { RegisterReader } from '../core/register-reader.js';
import type { RegisterWriter } from '../core/storage-control.js';

export function dryRunBus(real: RegisterReader): RegisterReader & RegisterWriter {
  const overlay = new Map<string, number>();
  const key = (u: number, a: number) => `${u}:${a}`;
  return {
    async readHolding(u, a, n) {
      const regs = await real.readHolding(u, a, n);
      return regs.map((v, i) => overlay.get(key(u, a + i)) ?? v);
    },
    readInput: (u, a, n) => real.readInput(u, a, n),
    async writeHolding(u, a, values) {
      values.forEach((v, i) => overlay.set(key(u, a + i), v));
    },
  };
}
