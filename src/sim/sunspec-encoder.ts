/**
 * Writes SunSpec register images from the shared layouts in src/modbus/sunspec/models.ts (the
 * gateway decodes with the same tables, so there is one truth about offsets). The image is laid
 * out once — "SunS", every model's ID/L header, not-implemented sentinels in every point, the
 * 0xFFFF/0 end marker — and afterwards points are overwritten in place through handles, which is
 * what keeps a re-encode per poll cheap.
 *
 * Word order is big-endian (high word first) for 32-bit types; strings are ASCII, two characters
 * per register, first character in the high byte, NUL padded.
 */
import {
  blockLength,
  END_MODEL_ID,
  type ModelDef,
  NOT_IMPLEMENTED,
  offsets,
  type PointDef,
  type PointType,
  SUNS_MARKER,
} from '../modbus/sunspec/models.js';
import { RegisterBank } from './bank.js';

export interface ModelSpec {
  def: ModelDef;
  /** number of repeating blocks (model 160 modules); 0 for models without one */
  repeats?: number;
}

/** Model 1's Pad and other pad points read 0x8000 (SunSpec "pad" value). */
const PAD_VALUE = 0x8000;

export class SunSpecImage {
  readonly bank: RegisterBank;
  private readonly models: ModelWriter[] = [];

  constructor(
    specs: readonly ModelSpec[],
    readonly base = 40000,
  ) {
    const total = 2 + specs.reduce((n, s) => n + 2 + modelLength(s), 0) + 2;
    this.bank = new RegisterBank(base, total);
    const regs = this.bank.regs;
    regs[0] = SUNS_MARKER[0];
    regs[1] = SUNS_MARKER[1];
    let at = 2;
    for (const s of specs) {
      const len = modelLength(s);
      regs[at] = s.def.id;
      regs[at + 1] = len;
      const w = new ModelWriter(this.bank, s.def, base + at, s.repeats ?? 0);
      w.clearAll();
      this.models.push(w);
      at += 2 + len;
    }
    regs[at] = END_MODEL_ID;
    regs[at + 1] = 0;
  }

  /** the n-th model with this id in the chain */
  model(id: number, occurrence = 0): ModelWriter {
    const found = this.models.filter((m) => m.def.id === id)[occurrence];
    if (!found) throw new Error(`model ${id} #${occurrence} is not in this image`);
    return found;
  }
}

function modelLength(s: ModelSpec): number {
  const rep = s.repeats ?? 0;
  if (rep > 0 && !s.def.repeating) throw new Error(`model ${s.def.id} has no repeating block`);
  return blockLength(s.def.fixed) + (s.def.repeating ? rep * blockLength(s.def.repeating) : 0);
}

type Located = PointDef & { offset: number };

export class ModelWriter {
  /** address of the first point (just after the ID and L registers) */
  readonly address: number;
  readonly length: number;
  private readonly fixed: Map<string, Located>;
  private readonly block: Map<string, Located>;
  private readonly blockStart: number;
  private readonly blockLen: number;
  private readonly sfs = new Map<string, number>();
  /** bumped whenever a scale factor changes, so point writers can cache their multiplier */
  sfEpoch = 0;

  constructor(
    private readonly bank: RegisterBank,
    readonly def: ModelDef,
    headerAddress: number,
    readonly repeats: number,
  ) {
    this.address = headerAddress + 2;
    this.fixed = offsets(def.fixed);
    this.block = offsets(def.repeating ?? []);
    this.blockStart = blockLength(def.fixed);
    this.blockLen = blockLength(def.repeating ?? []);
    this.length = this.blockStart + repeats * this.blockLen;
  }

  /** Write a scale factor; points that refer to it are scaled by it from now on. */
  sf(name: string, value: number): this {
    const pt = this.fixed.get(name);
    if (pt?.type !== 'sunssf') throw new Error(`model ${this.def.id} has no scale factor ${name}`);
    if (!Number.isInteger(value) || value < -10 || value > 10)
      throw new RangeError(`scale factor ${name}=${value} outside -10..10`);
    this.sfs.set(name, value);
    this.sfEpoch++;
    encodeInto(this.bank.regs, this.address - this.bank.start + pt.offset, 'sunssf', 1, value);
    return this;
  }

  /** a point of the fixed part */
  point(name: string): PointWriter {
    const pt = this.fixed.get(name);
    if (!pt) throw new Error(`model ${this.def.id} has no point ${name}`);
    return new PointWriter(this.bank, this.address + pt.offset, pt, this);
  }

  /** a point of repeating block i (0-based) */
  blockPoint(i: number, name: string): PointWriter {
    const pt = this.block.get(name);
    if (!pt || i < 0 || i >= this.repeats) throw new Error(`model ${this.def.id} has no block ${i} point ${name}`);
    return new PointWriter(this.bank, this.address + this.blockStart + i * this.blockLen + pt.offset, pt, this);
  }

  scaleOf(sfName: string): number | undefined {
    return this.sfs.get(sfName);
  }

  /** every point to its not-implemented value */
  clearAll(): void {
    const at = this.address - this.bank.start;
    for (const pt of this.fixed.values()) writeNotImplemented(this.bank.regs, at + pt.offset, pt);
    for (let i = 0; i < this.repeats; i++) {
      for (const pt of this.block.values())
        writeNotImplemented(this.bank.regs, at + this.blockStart + i * this.blockLen + pt.offset, pt);
    }
  }
}

export class PointWriter {
  private readonly index: number;
  private epoch = -1;
  private multiplier = 1;

  constructor(
    private readonly bank: RegisterBank,
    readonly address: number,
    readonly def: Located,
    private readonly model: ModelWriter,
  ) {
    this.index = address - bank.start;
  }

  /**
   * Write a value in engineering units: divided by 10^SF when the point has a scale factor.
   * Accumulators are floored (a lifetime counter must never read ahead of the energy it counts);
   * everything else is rounded. NaN/∞ become the not-implemented value.
   */
  set(value: number): void {
    const { def } = this;
    if (!Number.isFinite(value)) {
      this.clear();
      return;
    }
    let raw = value;
    if (def.sf) {
      if (this.epoch !== this.model.sfEpoch) {
        const sf = this.model.scaleOf(def.sf);
        if (sf === undefined) throw new Error(`${def.name}: scale factor ${def.sf} has not been set`);
        this.multiplier = 10 ** -sf;
        this.epoch = this.model.sfEpoch;
      }
      raw = value * this.multiplier;
    }
    raw = def.type === 'acc16' || def.type === 'acc32' ? Math.floor(raw + 1e-9) : Math.round(raw);
    encodeInto(this.bank.regs, this.index, def.type, def.size, raw);
  }

  /** one register as the wire carries it (a control a master wrote) */
  setRaw(word: number): void {
    this.bank.regs[this.index] = word & 0xffff;
  }

  /** ASCII text, truncated to the point's size, NUL padded */
  text(s: string): void {
    if (this.def.type !== 'string') throw new Error(`${this.def.name} is not a string point`);
    const regs = this.bank.regs;
    for (let r = 0; r < this.def.size; r++) {
      const hi = asciiAt(s, 2 * r);
      const lo = asciiAt(s, 2 * r + 1);
      regs[this.index + r] = (hi << 8) | lo;
    }
  }

  clear(): void {
    writeNotImplemented(this.bank.regs, this.index, this.def);
  }
}

function asciiAt(s: string, i: number): number {
  const c = i < s.length ? s.charCodeAt(i) : 0;
  return c < 0x80 ? c : 0x3f; // '?' for anything a SunSpec string cannot carry
}

function writeNotImplemented(regs: Uint16Array, index: number, pt: PointDef): void {
  if (pt.type === 'string') {
    regs.fill(0, index, index + pt.size);
    return;
  }
  if (pt.type === 'pad') {
    regs[index] = PAD_VALUE;
    return;
  }
  const ni = NOT_IMPLEMENTED[pt.type];
  if (ni === undefined) throw new Error(`no not-implemented value for type ${pt.type}`);
  writeWords(regs, index, pt.size, ni);
}

const LIMITS: Partial<Record<PointType, [number, number]>> = {
  // the not-implemented value is kept out of reach of real data
  uint16: [0, 0xfffe],
  int16: [-0x7fff, 0x7fff],
  sunssf: [-10, 10],
  uint32: [0, 0xfffffffe],
  int32: [-0x7fffffff, 0x7fffffff],
};

function encodeInto(regs: Uint16Array, index: number, type: PointType, size: number, raw: number): void {
  const lim = LIMITS[type];
  let v = raw;
  if (lim) v = v < lim[0] ? lim[0] : v > lim[1] ? lim[1] : v;
  // accumulators roll over, as the counters in a real meter do
  else if (type === 'acc16') v = ((v % 0x10000) + 0x10000) % 0x10000;
  else if (type === 'acc32') v = ((v % 0x100000000) + 0x100000000) % 0x100000000;
  writeWords(regs, index, size, v);
}

function writeWords(regs: Uint16Array, index: number, size: number, v: number): void {
  if (size === 1) {
    regs[index] = v & 0xffff;
    return;
  }
  const u = v >>> 0;
  regs[index] = u >>> 16;
  regs[index + 1] = u & 0xffff;
}
