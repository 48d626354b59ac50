/**
 * SunSpec models 704 (DER AC controls) and 123 (immediate controls) as the active-power-limit
 * capability (src/core/active-power-limit.ts). Point offsets, types and scale factors from the
 * SunSpec models repository (github.com/sunspec/models, commit 7abdf8982d5364f8ae916deee18aac86c11be36d):
 *
 * json/model_704.json (L 65), offsets after the header:
 *   12 WMaxLimPctEna (enum16, 0 DISABLED / 1 ENABLED)   13 WMaxLimPct (uint16, WMaxLimPct_SF, Pct)
 *   14 WMaxLimPctRvrt (uint16, WMaxLimPct_SF, Pct)     15 WMaxLimPctEnaRvrt (enum16)
 *   16 WMaxLimPctRvrtTms (uint32, Secs)                18 WMaxLimPctRvrtRem (uint32, Secs, read only)
 *   52 WMaxLimPct_SF (sunssf)
 * The percentage is of 702 `WMax` (the maximum active power setting), else 702 `WMaxRtg` (W_SF).
 * An older draft of 704 (json/model_704.json at 0211247df567435acd2ff69719a9487a855852b4, L 69,
 * `WMaxLimPctRvrtEna`, `WMaxLim_SF` at 56) has the same points 12..19 and its scale factor
 * elsewhere: a 704 of another length is refused by name rather than written with a guessed factor.
 *
 * json/model_123.json (L 24): 3 WMaxLimPct (uint16, WMaxLimPct_SF, "% WMax"), 4 WMaxLimPct_WinTms,
 *   5 WMaxLimPct_RvrtTms, 6 WMaxLimPct_RmpTms (uint16, Secs), 7 WMaxLim_Ena (enum16), 21 WMaxLimPct_SF.
 * The percentage is of 121 `WMax` (WMax_SF), else 120 `WRtg` (WRtg_SF).
 *
 * What each does when the gateway is gone (docs/limits.md "When the gateway is gone"):
 * - 704: after WMaxLimPctRvrtTms seconds without a write it takes WMaxLimPctRvrt and
 *   WMaxLimPctEnaRvrt: `setFailSafe` writes the fail-safe there, and every `apply` restarts the timer;
 * - 123: after WMaxLimPct_RvrtTms seconds the limit ends (WMaxLim_Ena back to 0): the site is
 *   unlimited, which check-config names.
 * Order: the value and its timer first, the enable last, so a limit never runs without its timer.
 */
import type { ActivePowerLimit, LimitRevert, PowerLimitCommand } from '../core/active-power-limit.js';
import type { RegisterReader } from '../core/register-reader.js';
import type { RegisterWrite, RegisterWriter } from '../core/storage-control.js';
import { ModbusError } from '../modbus/errors.js';
import { num } from '../modbus/sunspec/decode.js';
import { type DiscoveredModel, discoverSunSpec, readModel } from '../modbus/sunspec/discovery.js';

/** model 704 offsets after its header (json/model_704.json) */
export const M704 = {
  WMaxLimPctEna: 12,
  WMaxLimPct: 13,
  WMaxLimPctRvrt: 14,
  WMaxLimPctEnaRvrt: 15,
  WMaxLimPctRvrtTms: 16,
  WMaxLimPctRvrtRem: 18,
  WMaxLimPct_SF: 52,
} as const;
export const M704_LENGTH = 65;

/** model 123 offsets after its header (json/model_123.json) */
export const M123 = {
  WMaxLimPct: 3,
  WMaxLimPct_WinTms: 4,
  WMaxLimPct_RvrtTms: 5,
  WMaxLimPct_RmpTms: 6,
  WMaxLim_Ena: 7,
  WMaxLimPct_SF: 21,
} as const;
export const M123_LENGTH = 24;

const ENABLED = 1;
const DISABLED = 0;
const NOT_IMPLEMENTED_SF = -32768;

const int16 = (v: number) => (v >= 0x8000 ? v - 0x10000 : v);
type Bus = RegisterReader & RegisterWriter;

/** Writes `values` at `address` and reads them back (the capability's contract: every call writes, then reads back). */
async function put(bus: Bus, unitId: number, address: number, values: number[]): Promise<RegisterWrite> {
  await bus.writeHolding(unitId, address, values);
  return { address, values, readBack: await bus.readHolding(unitId, address, values.length) };
}

/** The rating a percentage is of: the first of `points` the model has, in W. */
async function ratingOf(bus: Bus, unitId: number, model: DiscoveredModel, points: readonly string[]): Promise<number> {
  const v = await readModel(bus, unitId, model);
  for (const p of points) {
    const w = num(v.fixed[p]);
    if (w !== undefined && w > 0) return w;
  }
  throw new ModbusError(
    'decode',
    `model ${model.id} on unit ${unitId} has none of ${points.join(', ')}: no rating to limit against`,
  );
}

/** The common part: the model's address, its percent scale factor and the rating, read once. */
abstract class SunSpecLimit implements ActivePowerLimit {
  abstract readonly revert: LimitRevert;
  private rating = 0;
  protected sf = 0;

  constructor(
    readonly unitId: number,
    /** address of the control model's first point */
    protected readonly address: number,
    private readonly ratingModel: DiscoveredModel,
    private readonly ratingPoints: readonly string[],
    private readonly sfOffset: number,
    protected readonly revertSeconds: number,
  ) {}

  async ratedW(bus: Bus): Promise<number> {
    if (this.rating > 0) return this.rating;
    const [sf] = await bus.readHolding(this.unitId, this.address + this.sfOffset, 1);
    const s = int16(sf!);
    if (s === NOT_IMPLEMENTED_SF || s < -10 || s > 10)
      throw new ModbusError(
        'decode',
        `unit ${this.unitId}: the limit's scale factor reads ${s}: cannot write a percentage`,
      );
    this.sf = s;
    this.rating = await ratingOf(bus, this.unitId, this.ratingModel, this.ratingPoints);
    return this.rating;
  }

  /** `watts` as the model's raw percentage of the rating, within 0..100 % */
  protected async raw(bus: Bus, watts: number): Promise<number> {
    const rated = await this.ratedW(bus);
    const pct = Math.min(100, Math.max(0, (100 * watts) / rated));
    // rounded down: a limit is never written above what was asked
    return Math.floor(pct / 10 ** this.sf + 1e-9);
  }

  abstract apply(bus: Bus, command: PowerLimitCommand): Promise<RegisterWrite[]>;
}

export class SunSpec704Limit extends SunSpecLimit {
  readonly revert: LimitRevert;

  constructor(unitId: number, address: number, rating: DiscoveredModel, revertSeconds: number) {
    super(unitId, address, rating, ['WMax', 'WMaxRtg'], M704.WMaxLimPct_SF, revertSeconds);
    this.revert = { kind: 'revert-values', seconds: revertSeconds };
  }

  /** WMaxLimPctEna and WMaxLimPct in one write: the write restarts the device's revert timer (a keep-alive). */
  async apply(bus: Bus, command: PowerLimitCommand): Promise<RegisterWrite[]> {
    const pct =
      command.kind === 'limit' ? await this.raw(bus, command.watts) : await this.raw(bus, Number.POSITIVE_INFINITY);
    const ena = command.kind === 'limit' ? ENABLED : DISABLED;
    // the value first, then the enable: a limit never runs with the last command's value
    return [
      await put(bus, this.unitId, this.address + M704.WMaxLimPct, [pct]),
      await put(bus, this.unitId, this.address + M704.WMaxLimPctEna, [ena]),
    ];
  }

  /** The fail-safe as the reversion value, enabled, with the reversion timer: where a dead gateway leaves the device. */
  async setFailSafe(bus: Bus, watts: number): Promise<RegisterWrite[]> {
    const pct = await this.raw(bus, watts);
    const t = this.revertSeconds;
    return [
      await put(bus, this.unitId, this.address + M704.WMaxLimPctRvrt, [pct, ENABLED, (t >>> 16) & 0xffff, t & 0xffff]),
    ];
  }
}

export class SunSpec123Limit extends SunSpecLimit {
  readonly revert: LimitRevert;

  constructor(unitId: number, address: number, rating: DiscoveredModel, revertSeconds: number) {
    super(unitId, address, rating, rating.id === 121 ? ['WMax'] : ['WRtg'], M123.WMaxLimPct_SF, revertSeconds);
    this.revert = { kind: 'revert-unlimited', seconds: revertSeconds };
  }

  /** The value with its window 0 (at once) and its revert timer, then the enable; `none` clears the enable. */
  async apply(bus: Bus, command: PowerLimitCommand): Promise<RegisterWrite[]> {
    if (command.kind === 'none') return [await put(bus, this.unitId, this.address + M123.WMaxLim_Ena, [DISABLED])];
    const pct = await this.raw(bus, command.watts);
    return [
      await put(bus, this.unitId, this.address + M123.WMaxLimPct, [pct, 0, this.revertSeconds]),
      await put(bus, this.unitId, this.address + M123.WMaxLim_Ena, [ENABLED]),
    ];
  }
}

/**
 * The device's SunSpec active power limit: 704 where it has one (with 702 for the rating), else
 * 123 (with 121, else 120); undefined when it has neither.
 */
export async function discoverSunSpecLimit(
  bus: RegisterReader,
  unitId: number,
  revertSeconds: number,
): Promise<SunSpec704Limit | SunSpec123Limit | undefined> {
  const { models } = await discoverSunSpec(bus, unitId);
  const find = (id: number) => models.find((m) => m.id === id);
  const m704 = find(704);
  const m702 = find(702);
  if (m704 && m702) {
    if (m704.length !== M704_LENGTH)
      throw new ModbusError(
        'decode',
        `model 704 on unit ${unitId} is ${m704.length} registers long, not the published ${M704_LENGTH}: its scale factor's place is unknown`,
      );
    return new SunSpec704Limit(unitId, m704.address, m702, revertSeconds);
  }
  const m123 = find(123);
  const rating = find(121) ?? find(120);
  if (m123 && rating && m123.length >= M123_LENGTH)
    return new SunSpec123Limit(unitId, m123.address, rating, revertSeconds);
  return undefined;
}
