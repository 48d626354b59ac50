/**
 * The simulated inverter's active power limit through SunSpec 123 and 704, as a device that
 * follows the models (SunSpec models repository json/model_123.json, json/model_704.json;
 * offsets in src/modbus/sunspec/models-controls.ts and models-der.ts):
 *
 *   123  WMaxLim_Ena 1: AC output at most WMaxLimPct % of 121 WMax. WMaxLimPct_RvrtTms > 0: that
 *        many seconds after the last write to the limit's points the limit ends (WMaxLim_Ena 0):
 *        the device reverts to unlimited.
 *   704  WMaxLimPctEna 1: AC output at most WMaxLimPct % of 702 WMax. WMaxLimPctRvrtTms > 0: that
 *        many seconds after the last write to the limit's points, WMaxLimPct takes WMaxLimPctRvrt
 *        and WMaxLimPctEna takes WMaxLimPctEnaRvrt; WMaxLimPctRvrtRem counts down to it.
 * Both enabled: the lower limit holds. The output follows a new limit after `lagMs` (a real
 * inverter's ramp and control delay), so the gateway's loop meets a plant with a delay.
 */
import { MODBUS_EXCEPTION, ModbusException } from './bank.js';
import type { ModelWriter } from './sunspec-encoder.js';

export type LimitModel = 123 | 704;

const WRITABLE: Record<LimitModel, readonly string[]> = {
  123: ['WMaxLimPct', 'WMaxLimPct_WinTms', 'WMaxLimPct_RvrtTms', 'WMaxLimPct_RmpTms', 'WMaxLim_Ena'],
  704: ['WMaxLimPctEna', 'WMaxLimPct', 'WMaxLimPctRvrt', 'WMaxLimPctEnaRvrt', 'WMaxLimPctRvrtTms'],
};
/** raw hundredths of a percent (704) and tenths (123): two scales, so the gateway reads each */
export const LIMIT_PCT_SF: Record<LimitModel, number> = { 123: -1, 704: -2 };

interface Word {
  model: LimitModel;
  point: string;
  /** word of a two-register point */
  word: number;
}

/** one model's limit registers, what they ask, and when they were last written */
class LimitRegisters {
  private readonly raw = new Map<string, number>();
  writtenAt = Number.NaN;

  constructor(
    readonly id: LimitModel,
    private readonly m: ModelWriter,
  ) {}

  get(name: string): number {
    return this.raw.get(name) ?? 0;
  }

  set(name: string, value: number): void {
    this.raw.set(name, value);
    const p = this.m.point(name);
    if (p.def.size === 2) p.set(value);
    else p.setRaw(value);
  }

  pct(name: string): number {
    return this.get(name) * 10 ** LIMIT_PCT_SF[this.id];
  }
}

/**
 * An output limit a device follows `lagMs` after it was asked (a real inverter's ramp and control
 * delay): the changes of the last `lagMs` and the one in force before them. Shared by the SunSpec
 * limit below and the vendor images (huawei-sun2000.ts).
 */
export class LaggedLimit {
  /** the limit asked from each time on, W (null: none), oldest first */
  private readonly changes: { at: number; w: number | null }[] = [];

  constructor(
    readonly lagMs: number,
    startTs: number,
  ) {
    this.changes.push({ at: startTs, w: null });
  }

  /** the limit asked from `at` on */
  note(at: number, w: number | null): void {
    const last = this.changes[this.changes.length - 1]!;
    if (last.w === w) return;
    // times only move forward: a revert found late is dated when it ran out, never before the last change
    this.changes.push({ at: Math.max(at, last.at), w });
    while (this.changes.length > 2 && this.changes[1]!.at + this.lagMs <= at) this.changes.shift();
  }

  /** the limit the output follows at ts: what was asked `lagMs` before */
  at(ts: number): number | null {
    let w: number | null = null;
    for (const c of this.changes) {
      if (c.at + this.lagMs > ts) break;
      w = c.w;
    }
    return w;
  }
}

export class PowerLimitSim {
  private readonly models = new Map<LimitModel, LimitRegisters>();
  private readonly words = new Map<number, Word>();
  private readonly lagged: LaggedLimit;
  /** writes that reached the limit's registers (tests count them) */
  writes = 0;
  /** site time the 704 revert timer last put the reversion values in force */
  revertedAt: number | undefined;

  constructor(
    controls: ReadonlyMap<LimitModel, ModelWriter>,
    private readonly wMax: number,
    lagMs: number,
    startTs: number,
  ) {
    this.lagged = new LaggedLimit(lagMs, startTs);
    for (const [id, m] of controls) {
      const regs = new LimitRegisters(id, m);
      this.models.set(id, regs);
      m.sf('WMaxLimPct_SF', LIMIT_PCT_SF[id]);
      for (const name of WRITABLE[id]) {
        const p = m.point(name);
        for (let w = 0; w < p.def.size; w++) this.words.set(p.address + w, { model: id, point: name, word: w });
        regs.set(name, 0);
      }
      regs.set('WMaxLimPct', 100 / 10 ** LIMIT_PCT_SF[id]);
      if (id === 704) regs.set('WMaxLimPctRvrt', 100 / 10 ** LIMIT_PCT_SF[id]);
    }
  }

  get lagMs(): number {
    return this.lagged.lagMs;
  }

  /** whether `address` is one of the limit's registers */
  owns(address: number): boolean {
    return this.words.has(address);
  }

  /** FC6/FC16 to the limit's points: all or nothing, at site time ts. */
  write(address: number, values: readonly number[], ts: number): void {
    const at = values.map((_, i) => this.words.get(address + i));
    if (at.some((w) => w === undefined))
      throw new ModbusException(
        MODBUS_EXCEPTION.ILLEGAL_DATA_ADDRESS,
        `registers ${address}..${address + values.length - 1} are not writable limit controls`,
      );
    this.settle(ts);
    const touched = new Set<LimitRegisters>();
    at.forEach((w, i) => {
      const regs = this.models.get(w!.model)!;
      const v = values[i]! & 0xffff;
      const before = regs.get(w!.point);
      const size = this.sizeOf(regs, w!.point);
      const next =
        size === 1 ? v : w!.word === 0 ? (v * 0x10000 + (before & 0xffff)) >>> 0 : ((before & 0xffff0000) | v) >>> 0;
      regs.set(w!.point, next);
      touched.add(regs);
    });
    for (const r of touched) r.writtenAt = ts;
    this.writes++;
    this.note(ts);
  }

  /** The output limit the inverter follows at ts, W (null: none): what was asked `lagMs` before. */
  acLimitW(ts: number): number | null {
    this.settle(ts);
    return this.lagged.at(ts);
  }

  /** The limit the registers ask for now (no lag), W. */
  commandedW(ts: number): number | null {
    this.settle(ts);
    return this.asked();
  }

  /** 704's WMaxLimPctRvrtRem at ts, for the image */
  encode(ts: number): void {
    this.settle(ts);
    const r = this.models.get(704);
    if (!r) return;
    const tms = r.get('WMaxLimPctRvrtTms');
    const left = tms > 0 && Number.isFinite(r.writtenAt) ? Math.max(0, tms - Math.floor((ts - r.writtenAt) / 1000)) : 0;
    r.set('WMaxLimPctRvrtRem', left);
  }

  private sizeOf(r: LimitRegisters, name: string): number {
    return name === 'WMaxLimPctRvrtTms' && r.id === 704 ? 2 : 1;
  }

  /** the revert timers that ran out by ts, each at its own time */
  private settle(ts: number): void {
    const r123 = this.models.get(123);
    if (r123 && r123.get('WMaxLim_Ena') === 1) {
      const due = r123.writtenAt + r123.get('WMaxLimPct_RvrtTms') * 1000;
      if (r123.get('WMaxLimPct_RvrtTms') > 0 && due <= ts) {
        r123.set('WMaxLim_Ena', 0);
        this.note(due);
      }
    }
    const r704 = this.models.get(704);
    if (r704) {
      const due = r704.writtenAt + r704.get('WMaxLimPctRvrtTms') * 1000;
      if (r704.get('WMaxLimPctRvrtTms') > 0 && due <= ts) {
        r704.set('WMaxLimPct', r704.get('WMaxLimPctRvrt'));
        r704.set('WMaxLimPctEna', r704.get('WMaxLimPctEnaRvrt'));
        // the reversion is in force until the next write restarts the timer
        r704.writtenAt = Number.NaN;
        this.revertedAt = due;
        this.note(due);
      }
    }
  }

  private asked(): number | null {
    let w: number | null = null;
    const ena = { 123: 'WMaxLim_Ena', 704: 'WMaxLimPctEna' } as const;
    for (const r of this.models.values()) {
      if (r.get(ena[r.id]) !== 1) continue;
      const lim = (Math.min(100, r.pct('WMaxLimPct')) / 100) * this.wMax;
      w = w === null ? lim : Math.min(w, lim);
    }
    return w;
  }

  private note(at: number): void {
    this.lagged.note(at, this.asked());
  }
}
