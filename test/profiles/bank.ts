/**
 * A unit's registers in memory, answering like a device: an address it does not have is refused
 * with exception 2 (illegal data address), as Modbus devices do. Every request is logged so
 * tests can check what the engine asked for.
 */

import type { RegisterReader } from '../../src/core/register-reader.js';
import { ModbusError } from '../../src/modbus/errors.js';

type Fn = 'holding' | 'input';

export class BankReader implements RegisterReader {
  readonly requests: { fn: Fn; unit: number; address: number; count: number }[] = [];
  private readonly regs = new Map<string, number>();
  /** answer with fewer registers than asked (a broken gateway) */
  truncate = false;

  /** Words as they arrive on the wire, e.g. set('input', 0x34, '44 79 C0 00'). */
  set(fn: Fn, address: number, hex: string, unit = 1): this {
    const bytes = hex
      .trim()
      .split(/\s+/)
      .map((b) => parseInt(b, 16));
    for (let i = 0; i < bytes.length; i += 2)
      this.regs.set(`${unit}:${fn}:${address + i / 2}`, (bytes[i]! << 8) | bytes[i + 1]!);
    return this;
  }

  /** ASCII text, NUL padded to `length` registers */
  setText(fn: Fn, address: number, text: string, length: number, unit = 1): this {
    const padded = text.padEnd(length * 2, '\0');
    for (let i = 0; i < length; i++)
      this.regs.set(`${unit}:${fn}:${address + i}`, (padded.charCodeAt(2 * i) << 8) | padded.charCodeAt(2 * i + 1));
    return this;
  }

  delete(fn: Fn, address: number, count = 1, unit = 1): this {
    for (let i = 0; i < count; i++) this.regs.delete(`${unit}:${fn}:${address + i}`);
    return this;
  }

  private read(fn: Fn, unit: number, address: number, count: number): Promise<number[]> {
    this.requests.push({ fn, unit, address, count });
    const out: number[] = [];
    for (let i = 0; i < count; i++) {
      const v = this.regs.get(`${unit}:${fn}:${address + i}`);
      if (v === undefined) return Promise.reject(new ModbusError('exception', 'exception 2 (illegal data address)', 2));
      out.push(v);
    }
    return Promise.resolve(this.truncate ? out.slice(0, -1) : out);
  }

  readHolding(unit: number, address: number, count: number): Promise<number[]> {
    return this.read('holding', unit, address, count);
  }

  readInput(unit: number, address: number, count: number): Promise<number[]> {
    return this.read('input', unit, address, count);
  }
}
