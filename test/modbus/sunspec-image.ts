/**
 * Hand-built SunSpec register images for the decoder and profile tests. Every register a test
 * sets is written at an offset counted from the published point list (SunSpec models repository,
 * json/model_<id>.json; offsets start at the first register after ID and L), never produced by
 * the gateway's layouts or the simulator's encoder. This file only places words at addresses.
 */
import type { DeviceConfig, DeviceRole } from '../../src/config/types.js';
import type { RegisterReader } from '../../src/core/register-reader.js';

/** ASCII, two characters per register, first character in the high byte, NUL padded */
export function ascii(s: string, regs: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < regs; i++) out.push(((s.charCodeAt(2 * i) || 0) << 8) | (s.charCodeAt(2 * i + 1) || 0));
  return out;
}

/** float32 NaN, SunSpec's not-implemented value */
export const NAN = [0x7fc0, 0x0000] as const;

/** The registers of one model body (after ID and L): `fill` (a word, or words repeated) everywhere, then `set` by offset. */
export function body(
  length: number,
  fill: number | readonly number[],
  set: Record<number, readonly number[]> = {},
): number[] {
  const pattern = typeof fill === 'number' ? [fill] : fill;
  const regs = Array.from({ length }, (_, i) => pattern[i % pattern.length]!);
  for (const [offset, words] of Object.entries(set)) words.forEach((w, k) => (regs[Number(offset) + k] = w & 0xffff));
  return regs;
}

/** model 1 with maker, model, version and serial (Mn 0, Md 16, Opt 32, Vr 40, SN 48, DA 64, Pad 65) */
export function common(mn = 'ACME', md = 'X-1', sn = 'SN1', vr = '1.0'): [number, number[]] {
  return [1, [...ascii(mn, 16), ...ascii(md, 16), ...ascii('', 8), ...ascii(vr, 8), ...ascii(sn, 16), 1, 0x8000]];
}

export interface ChainOptions {
  base?: number;
  /** end marker 0xFFFF/0 after the last model (default true) */
  end?: boolean;
}

/** "SunS", each model's ID, L (the length of the body given) and body, then the end marker */
export function chain(
  models: readonly (readonly [number, readonly number[]])[],
  opts: ChainOptions = {},
): Map<number, number> {
  const regs = [0x5375, 0x6e53];
  for (const [id, b] of models) regs.push(id, b.length, ...b);
  if (opts.end ?? true) regs.push(0xffff, 0);
  const base = opts.base ?? 40000;
  return new Map(regs.map((v, i) => [base + i, v]));
}

/** Answers from the image; an address outside it is Modbus exception 2, as a device answers. */
export class ImageReader implements RegisterReader {
  reads = 0;
  constructor(private readonly image: Map<number, number>) {}
  readInput(): Promise<number[]> {
    return Promise.reject(Object.assign(new Error('Modbus exception 1'), { modbusCode: 1 }));
  }
  async readHolding(_unit: number, address: number, length: number): Promise<number[]> {
    this.reads++;
    const out: number[] = [];
    for (let a = address; a < address + length; a++) {
      const v = this.image.get(a);
      if (v === undefined) throw Object.assign(new Error('Modbus exception 2'), { modbusCode: 2 });
      out.push(v);
    }
    return out;
  }
}

export function device(role: DeviceRole, id: string = role): DeviceConfig {
  return {
    id,
    role,
    profile: 'sunspec',
    connection: { type: 'tcp', host: '127.0.0.1', port: 502, unitId: 1, timeoutMs: 1000 },
  };
}
