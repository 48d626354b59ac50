/**
 * The active-power-limit capability: the one contract between `src/limits/` (the site's export,
 * import and generation limits and the loop that holds them) and the device layer, which implements
 * it from SunSpec model 123 or 704 or from a profile's `limit:` map (vendor knowledge as data), as
 * `storage-control.ts` is for batteries. docs/design.md "Site limits and the grid operator".
 */
import type { RegisterReader } from './register-reader.js';
import type { RegisterWrite, RegisterWriter } from './storage-control.js';

/** What the limits loop asks of one inverter: AC output at most `watts`, or its own full output. */
export type PowerLimitCommand = { kind: 'limit'; watts: number } | { kind: 'none' };

/**
 * What the device does with its limit once the gateway stops writing:
 * - `revert-values`: after `seconds` it falls to the values `setFailSafe` wrote (SunSpec 704
 *   `WMaxLimPctRvrt`/`WMaxLimPctEnaRvrt`, a vendor's fallback limit): a dead gateway leaves the site
 *   at the fail-safe;
 * - `revert-unlimited`: after `seconds` it drops the limit (SunSpec 123 `WMaxLimPct_RvrtTms`):
 *   a dead gateway leaves the site unlimited, which `check-config` and docs/limits.md name;
 * - `keep-alive`: the device drops the limit unless it is written again within `seconds`;
 * - `none`: the limit stays as written until written again (a device that keeps it in flash).
 */
export type LimitRevert =
  | { kind: 'revert-values'; seconds: number }
  | { kind: 'revert-unlimited'; seconds: number }
  | { kind: 'keep-alive'; seconds: number }
  | { kind: 'none' };

/** One inverter's active power limit, bound to its unit. Every call writes, then reads back. */
export interface ActivePowerLimit {
  /**
   * what `watts` bounds: `output`, the inverter's AC output (the default); `export`, the export
   * its own meter reads (the device's own export limiter, which holds it itself)
   */
  readonly holds?: 'output' | 'export';
  /** the unit the writes go to */
  readonly unitId?: number;
  readonly revert: LimitRevert;
  /** false when no source says what the device does once the gateway is gone (`revert` is then the gateway's keep-alive); absent: known */
  readonly revertKnown?: boolean;
  /** the device's rated AC output in W (SunSpec `WMax`, the document's nameplate), which percent limits are of */
  ratedW(bus: RegisterReader): Promise<number>;
  /** Puts the limit on the device: only the registers whose value changes, plus what the revert needs. */
  apply(bus: RegisterReader & RegisterWriter, command: PowerLimitCommand): Promise<RegisterWrite[]>;
  /** Where the device keeps a fallback (`revert-values`): writes the fail-safe output there. */
  setFailSafe?(bus: RegisterReader & RegisterWriter, watts: number): Promise<RegisterWrite[]>;
}
