/** Three-phase values as a tuple, so each phase read is known to exist. */
export type Phases = readonly [number, number, number];

/** the phase indexes, typed so that indexing a Phases or a register-address tuple needs no check */
export const PHASES = [0, 1, 2] as const;

export const perPhase = (v: Phases, f: (x: number) => number): Phases => [f(v[0]), f(v[1]), f(v[2])];

export const phaseSum = (v: Phases): number => v[0] + v[1] + v[2];

/** line-to-line voltage of two phases 120° apart */
const lineV = (a: number, b: number) => Math.sqrt(a * a + b * b + a * b);

/** L1-L2, L2-L3, L3-L1 */
export const lineVoltages = (v: Phases): Phases => [lineV(v[0], v[1]), lineV(v[1], v[2]), lineV(v[2], v[0])];
