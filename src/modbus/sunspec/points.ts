/**
 * The vocabulary of SunSpec layouts: point types and sizes, compact constructors for the model
 * tables, offsets and not-implemented values (SunSpec Information Model Reference; SunSpec Modbus
 * specification, "Data types" and "Unimplemented registers").
 */
export type PointType =
  | 'uint16'
  | 'int16'
  | 'uint32'
  | 'int32'
  | 'acc16'
  | 'acc32'
  | 'enum16'
  | 'bitfield16'
  | 'bitfield32'
  | 'sunssf'
  | 'string'
  | 'pad'
  | 'float32'
  | 'int64'
  | 'uint64'
  | 'acc64'
  | 'count';

export interface PointDef {
  name: string;
  type: PointType;
  /** registers */
  size: number;
  /** name of the scale-factor point in the same model */
  sf?: string;
  units?: string;
}

export interface ModelDef {
  id: number;
  name: string;
  fixed: PointDef[];
  /**
   * repeating block (MPPT modules of 160, DC ports of 714); the number of blocks is what L holds,
   * capped by `countPoint` when the model names one and the device filled it in
   */
  repeating?: PointDef[];
  /** fixed-block point that counts the repeating blocks (160 `N`, 714 `NPrt`) */
  countPoint?: string;
}

const SIZE: Record<PointType, number> = {
  uint16: 1,
  int16: 1,
  uint32: 2,
  int32: 2,
  acc16: 1,
  acc32: 2,
  enum16: 1,
  bitfield16: 1,
  bitfield32: 2,
  sunssf: 1,
  string: 0,
  pad: 1,
  float32: 2,
  int64: 4,
  uint64: 4,
  acc64: 4,
  count: 1,
};

/** compact point constructor: p(name, type, sf?, units?) ; strings: s(name, registers) */
export function p(name: string, type: PointType, sf?: string, units?: string): PointDef {
  return { name, type, size: SIZE[type], ...(sf ? { sf } : {}), ...(units ? { units } : {}) };
}
export function s(name: string, size: number): PointDef {
  return { name, type: 'string', size };
}
/** a total and its three per-phase points: X, XphA, XphB, XphC (energy points spell it XPhA) */
export function phases(name: string, type: PointType, sf: string | undefined, units: string, ph = 'ph'): PointDef[] {
  return [p(name, type, sf, units), ...['A', 'B', 'C'].map((x) => p(`${name}${ph}${x}`, type, sf, units))];
}
/** the points of a non-repeating nested group (704 `PFWInj` etc.), named `Group.Point`, laid out after the parent's points */
export function group(name: string, points: readonly PointDef[]): PointDef[] {
  return points.map((pt) => ({ ...pt, name: `${name}.${pt.name}` }));
}

/** St, StVnd and the six event bitfields that close the inverter models 101–103 and 111–113 */
export function inverterStateAndEvents(): PointDef[] {
  return [
    p('St', 'enum16'),
    p('StVnd', 'enum16'),
    ...['Evt1', 'Evt2', 'EvtVnd1', 'EvtVnd2', 'EvtVnd3', 'EvtVnd4'].map((n) => p(n, 'bitfield32')),
  ];
}

export function blockLength(points: readonly PointDef[]): number {
  return points.reduce((n, pt) => n + pt.size, 0);
}

/** offset of each point from the start of its block */
export function offsets(points: readonly PointDef[]): Map<string, PointDef & { offset: number }> {
  const out = new Map<string, PointDef & { offset: number }>();
  let o = 0;
  for (const pt of points) {
    out.set(pt.name, { ...pt, offset: o });
    o += pt.size;
  }
  return out;
}

/**
 * Not-implemented values by type (SunSpec Information Model Reference, "unimplemented"): integer
 * types as their value, float32 as its bit pattern, the quiet NaN 0x7FC00000 (the decoder reads
 * any NaN as absent). The 64-bit types are not listed because a number cannot hold their patterns
 * exactly; the decoder checks their words instead.
 */
export const NOT_IMPLEMENTED: Partial<Record<PointType, number>> = {
  uint16: 0xffff,
  int16: -0x8000,
  uint32: 0xffffffff,
  int32: -0x80000000,
  acc16: 0,
  acc32: 0,
  enum16: 0xffff,
  bitfield16: 0xffff,
  bitfield32: 0xffffffff,
  sunssf: -0x8000,
  count: 0xffff,
  float32: 0x7fc00000,
};
