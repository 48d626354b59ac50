/**
 * Register words read from one unit, kept between polls (slow registers are read less often than
 * the poll), and the decoding of profile values out of them: raw bits, sentinels, type.
 */

import type { RegisterReader } from '../core/register-reader.js';
import { decodeNumber, rawBits, str } from '../modbus/codec.js';
import { ModbusError, toModbusError } from '../modbus/errors.js';
import type { ReadRange } from './batch.js';
import type { ValueRef } from './compiled.js';

/** Reads one range, checking the answer has the registers asked for. */
export async function readRange(reader: RegisterReader, unitId: number, r: ReadRange, what: string): Promise<number[]> {
  const regs =
    r.fn === 'holding'
      ? await reader.readHolding(unitId, r.address, r.count)
      : await reader.readInput(unitId, r.address, r.count);
  if (
    !Array.isArray(regs) ||
    regs.length !== r.count ||
    !regs.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff)
  ) {
    throw new ModbusError(
      'decode',
      `${what}: asked unit ${unitId} for ${r.count} ${r.fn} registers at ${r.address}, the answer had ${Array.isArray(regs) ? `${regs.length} words` : 'none'}${Array.isArray(regs) && regs.length === r.count ? ' out of 16-bit range' : ''}`,
    );
  }
  return regs;
}

/** True for a Modbus exception answer (the device is there but refuses the address or function). */
export function isException(err: unknown): boolean {
  return toModbusError(err).kind === 'exception';
}

const key = (fn: string, address: number) => `${fn}:${address}`;

export class RegisterCache {
  private readonly words = new Map<string, number>();

  clear(): void {
    this.words.clear();
  }

  store(r: ReadRange, regs: readonly number[]): void {
    regs.forEach((w, i) => this.words.set(key(r.fn, r.address + i), w));
  }

  /** an optional range the device refused: its values are absent until it answers again */
  forget(r: ReadRange): void {
    for (let i = 0; i < r.count; i++) this.words.delete(key(r.fn, r.address + i));
  }

  private wordsOf(ref: ValueRef): number[] | undefined {
    const out: number[] = [];
    for (let i = 0; i < ref.count; i++) {
      const w = this.words.get(key(ref.fn, ref.address + i));
      if (w === undefined) return undefined;
      out.push(w);
    }
    return out;
  }

  /** The value as a number; undefined when not read, a sentinel, or not a finite number (f32 NaN). */
  number(ref: ValueRef): number | undefined {
    const regs = this.wordsOf(ref);
    if (!regs || ref.type === 'string') return undefined;
    if (ref.sentinels.length > 0) {
      const bits = rawBits(regs, 0, ref.count, ref.order);
      if (ref.sentinels.includes(bits)) return undefined;
    }
    const v = decodeNumber(ref.type, regs, 0, ref.order);
    return Number.isFinite(v) ? v : undefined;
  }

  /** The value as text (string registers) or the number written out; undefined when absent. */
  text(ref: ValueRef): string | undefined {
    if (ref.type !== 'string') {
      const n = this.number(ref);
      return n === undefined ? undefined : String(n);
    }
    const regs = this.wordsOf(ref);
    if (!regs) return undefined;
    return str(regs, 0, ref.count, ref.order) || undefined;
  }
}
