/** Register codecs: Modbus registers are 16-bit big-endian words; multi-word values high word first. */
export function u16(regs: readonly number[], i: number): number {
  return regs[i]! & 0xffff;
}
export function s16(regs: readonly number[], i: number): number {
  const v = regs[i]! & 0xffff;
  return v >= 0x8000 ? v - 0x10000 : v;
}
export function u32(regs: readonly number[], i: number): number {
  return (regs[i]! & 0xffff) * 0x10000 + (regs[i + 1]! & 0xffff);
}
export function s32(regs: readonly number[], i: number): number {
  const v = u32(regs, i);
  return v >= 0x80000000 ? v - 0x100000000 : v;
}
/** ASCII, two characters per register, NUL padded; trailing NULs and spaces trimmed */
export function str(regs: readonly number[], i: number, n: number): string {
  let out = '';
  for (let k = 0; k < n; k++) {
    const r = regs[i + k]! & 0xffff;
    out += String.fromCharCode(r >> 8, r & 0xff);
  }
  // eslint-disable-next-line no-control-regex
  return out.replace(/[\u0000\s]+$/u, '').replace(/\u0000/gu, '');
}
