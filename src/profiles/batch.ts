/**
 * Read planning: the registers one poll needs, merged into as few requests as the device allows.
 * Each round trip costs a bus turnaround (tens of ms on RS-485 at 9600 baud), so neighbouring
 * registers are fetched together, across gaps of at most `maxGap` unused registers and up to
 * `maxRegisters` per request (Modbus allows 125). Holding and input registers are different
 * function codes and never share a request; optional registers travel apart so that a device
 * lacking one cannot fail the read of the others.
 */
import type { RegisterFunction } from './profile-types.js';

export interface ReadRange {
  fn: RegisterFunction;
  address: number;
  count: number;
  optional?: boolean;
}

export interface BatchLimits {
  maxRegisters: number;
  maxGap: number;
}

/** Merged requests covering every range, in address order per function code. */
export function planReads(ranges: readonly ReadRange[], limits: BatchLimits): ReadRange[] {
  const groups = new Map<string, ReadRange[]>();
  const required = ranges.filter((r) => !r.optional);
  // an optional register a required one covers already (a live voltage the grid state reads too) comes with it
  const covered = (r: ReadRange) =>
    required.some((q) => q.fn === r.fn && q.address <= r.address && r.address + r.count <= q.address + q.count);
  for (const r of ranges) {
    if (r.optional && covered(r)) continue;
    const key = `${r.fn}:${r.optional ? 'optional' : 'required'}`;
    const list = groups.get(key);
    if (list) list.push(r);
    else groups.set(key, [r]);
  }
  const out: ReadRange[] = [];
  for (const list of groups.values()) {
    const sorted = [...list].sort((a, b) => a.address - b.address || b.count - a.count);
    let cur: ReadRange | null = null;
    for (const r of sorted) {
      if (cur) {
        const end = cur.address + cur.count;
        const gap = r.address - end;
        const merged = Math.max(end, r.address + r.count) - cur.address;
        if (gap <= limits.maxGap && merged <= limits.maxRegisters) {
          cur.count = merged;
          continue;
        }
        out.push(cur);
      }
      cur = { fn: r.fn, address: r.address, count: r.count, ...(r.optional ? { optional: true } : {}) };
    }
    if (cur) out.push(cur);
  }
  return out;
}
