/**
 * What the gateway's own reads of a bus returned lately, so a guest's read of the same registers
 * (the Modbus proxy, docs/modbus-proxy.md) can be answered without a second trip to the device:
 * three tools polling the registers sitegw polls cost the device one read. A write to holding
 * registers forgets what it overlaps.
 */
import type { RegisterFunction } from './rtu-frame.js';

interface Block {
  unitId: number;
  fn: RegisterFunction;
  address: number;
  registers: readonly number[];
  /** performance.now() of the answer */
  at: number;
}

/** a site's poll reads a few dozen blocks per bus */
const MAX_BLOCKS = 256;

export class RecentReads {
  private readonly blocks = new Map<string, Block>();

  put(unitId: number, fn: RegisterFunction, address: number, registers: readonly number[], at: number): void {
    const key = `${unitId}/${fn}/${address}/${registers.length}`;
    this.blocks.delete(key);
    this.blocks.set(key, { unitId, fn, address, registers: [...registers], at });
    if (this.blocks.size > MAX_BLOCKS) this.blocks.delete(this.blocks.keys().next().value!);
  }

  /** The registers [address, address + quantity) from one block read at most maxAgeMs ago. */
  find(
    unitId: number,
    fn: RegisterFunction,
    address: number,
    quantity: number,
    maxAgeMs: number,
    now: number,
  ): number[] | undefined {
    let best: Block | undefined;
    for (const b of this.blocks.values()) {
      if (b.unitId !== unitId || b.fn !== fn || now - b.at > maxAgeMs) continue;
      if (address < b.address || address + quantity > b.address + b.registers.length) continue;
      if (!best || b.at > best.at) best = b;
    }
    return best?.registers.slice(address - best.address, address - best.address + quantity);
  }

  /** A write to holding registers [address, address + count) of the unit. */
  forget(unitId: number, address: number, count: number): void {
    for (const [key, b] of this.blocks)
      if (
        b.unitId === unitId &&
        b.fn === 'holding' &&
        address < b.address + b.registers.length &&
        b.address < address + count
      )
        this.blocks.delete(key);
  }
}
