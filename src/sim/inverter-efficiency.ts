import { itemAt } from '../core/item-at.js';
import { SimConfigError } from './config.js';

/**
 * DC↔AC conversion of the hybrid inverter. Efficiency η is piecewise linear in DC power, so on each
 * segment P·η(P) is a quadratic and the inverse has a closed form: dispatch asks "how much DC for
 * this much AC" every simulated second, and an exact answer keeps the energy balance exact.
 *
 *   DC → AC (dc ≥ 0): ac = dc·η(dc) − standby
 *   AC → DC (dc < 0): ac = dc/η(|dc|) − standby   (charging from AC costs more AC than it stores)
 */
export class InverterConversion {
  /** per segment: start power, end power, η = a + b·P */
  private readonly seg: { p0: number; p1: number; a: number; b: number }[] = [];

  constructor(
    readonly ratedW: number,
    readonly standbyW: number,
    curve: ReadonlyArray<readonly [number, number]>,
  ) {
    for (const [i, [x0, e0]] of curve.entries()) {
      const next = curve[i + 1];
      const p0 = x0 * ratedW;
      if (!next) {
        this.seg.push({ p0, p1: Infinity, a: e0, b: 0 });
        break;
      }
      const p1 = next[0] * ratedW;
      const b = (next[1] - e0) / (p1 - p0);
      const s = { p0, p1, a: e0 - b * p0, b };
      // P·η(P) and P/η(P) must rise with P or the inverse is ambiguous
      if (s.a + 2 * b * p0 <= 0 || s.a + 2 * b * p1 <= 0 || s.a <= 0) {
        throw new SimConfigError('inverter.efficiencyCurve', `segment ${i} makes output fall as input rises`);
      }
      this.seg.push(s);
    }
  }

  efficiency(dcAbsW: number): number {
    const s = this.segmentFor(dcAbsW);
    return s.a + s.b * dcAbsW;
  }

  acFromDc(dcW: number): number {
    const p = Math.abs(dcW);
    const eta = this.efficiency(p);
    return (dcW >= 0 ? p * eta : -p / eta) - this.standbyW;
  }

  /** exact inverse of acFromDc */
  dcForAc(acW: number): number {
    const y = acW + this.standbyW;
    if (y === 0) return 0;
    const target = Math.abs(y);
    for (const s of this.seg) {
      if (y > 0) {
        if (s.p1 !== Infinity && s.p1 * (s.a + s.b * s.p1) < target) continue;
        // b·P² + a·P − y = 0, written to stay stable when b → 0
        return (2 * target) / (s.a + Math.sqrt(s.a * s.a + 4 * s.b * target));
      }
      if (s.p1 !== Infinity && s.p1 / (s.a + s.b * s.p1) < target) continue;
      // P / (a + b·P) = Y  →  P = Y·a / (1 − Y·b)
      return -(target * s.a) / (1 - target * s.b);
    }
    throw new Error('unreachable: last efficiency segment is unbounded');
  }

  private segmentFor(p: number) {
    const seg = this.seg;
    for (let i = seg.length - 1; i > 0; i--) {
      const s = itemAt(seg, i);
      if (p >= s.p0) return s;
    }
    return itemAt(seg, 0);
  }
}
