import { describe, expect, it } from 'vitest';
import { planReads, type ReadRange } from '../../src/profiles/batch.js';

const input = (address: number, count = 2): ReadRange => ({ fn: 'input', address, count });
const holding = (address: number, count = 1): ReadRange => ({ fn: 'holding', address, count });

describe('read planning', () => {
  it('merges contiguous registers into one request', () => {
    // SDM630 phase powers 0x000C, 0x000E, 0x0010: three f32 back to back
    expect(planReads([input(0x0c), input(0x0e), input(0x10)], { maxRegisters: 125, maxGap: 0 })).toEqual([
      input(0x0c, 6),
    ]);
  });

  it('spans a gap up to maxGap and no further', () => {
    // total power 0x0034 and import energy 0x0048: 18 unused registers between them
    const ranges = [input(0x34), input(0x48)];
    expect(planReads(ranges, { maxRegisters: 125, maxGap: 18 })).toEqual([input(0x34, 0x48 + 2 - 0x34)]);
    expect(planReads(ranges, { maxRegisters: 125, maxGap: 17 })).toEqual([input(0x34), input(0x48)]);
  });

  it('never asks for more than maxRegisters in one request', () => {
    const ranges = Array.from({ length: 70 }, (_, i) => input(i * 2)); // 140 contiguous registers
    const plan = planReads(ranges, { maxRegisters: 125, maxGap: 10 });
    expect(plan.map((r) => r.count)).toEqual([124, 16]);
    expect(plan.every((r) => r.count <= 125)).toBe(true);
    // every register is still covered exactly once
    expect(plan[0]!.address + plan[0]!.count).toBe(plan[1]!.address);
  });

  it('keeps holding and input registers in separate requests even at the same address', () => {
    const plan = planReads([holding(100), input(100, 1), holding(101), input(101, 1)], {
      maxRegisters: 125,
      maxGap: 10,
    });
    expect(plan).toHaveLength(2);
    expect(plan).toContainEqual({ fn: 'holding', address: 100, count: 2 });
    expect(plan).toContainEqual({ fn: 'input', address: 100, count: 2 });
  });

  it('reads optional registers in requests of their own', () => {
    const plan = planReads([holding(37758, 2), { ...holding(37760), optional: true }], {
      maxRegisters: 125,
      maxGap: 10,
    });
    expect(plan).toEqual([holding(37758, 2), { fn: 'holding', address: 37760, count: 1, optional: true }]);
  });

  it('reads a register wanted twice (a value and a state rule) once', () => {
    expect(planReads([input(0), input(0), input(2)], { maxRegisters: 125, maxGap: 0 })).toEqual([input(0, 4)]);
  });

  it('covers overlapping ranges and does not depend on input order', () => {
    const a = planReads([input(10, 4), input(8, 4), input(11, 1)], { maxRegisters: 125, maxGap: 0 });
    expect(a).toEqual([input(8, 6)]);
  });
});
