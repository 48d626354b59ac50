/**
 * The storage-control capability: the one contract between `src/control/` (operation mode, plans,
 * the safety envelope, the executor) and the device layer, which implements it from a profile's
 * `control:` map (vendor knowledge as data) or from SunSpec model 124. evcc's
 * `api.BatteryController` is the model: one small interface, the vendors behind it.
 * docs/design.md "Control: operation mode and plans".
 */
import type { RegisterReader } from './register-reader.js';

/**
 * What the executor asks of a storage system, already clipped to the safety envelope. `powerW` is
 * battery power on the AC side, always positive; `mode` gives the direction.
 */
export type StorageCommand =
  | { mode: 'self-consumption' }
  | { mode: 'hold' }
  | { mode: 'charge'; powerW: number }
  | { mode: 'discharge'; powerW: number };

/** FC6/FC16 writes to one unit; the buses implement it beside their reads. */
export interface RegisterWriter {
  writeHolding(unitId: number, address: number, values: number[]): Promise<void>;
}

/** One register write as the audit records it: what was written and what reading it back gave. */
export interface RegisterWrite {
  address: number;
  values: number[];
  /** the registers read back after the write; equal to `values` when the device took it */
  readBack: number[];
}

/**
 * How long a command lives on the device without the gateway: a revert timer the device runs
 * itself (SunSpec 124 `InOutWRte_RvrtTms`, a vendor's command timeout) or, where it has none, a
 * keep-alive the gateway must re-assert within `seconds` (and the device falls back when it stops).
 */
export type CommandLife = { kind: 'revert-timer'; seconds: number } | { kind: 'keep-alive'; seconds: number };

/** A storage system's control, bound to its unit. Every call writes, then reads back. */
export interface StorageControl {
  readonly life: CommandLife;
  /** the unit the writes go to */
  readonly unitId?: number;
  /**
   * The registers self-consumption itself sets (their value then is the device's own logic);
   * `control release` restores every other register control changed to its value from before.
   */
  readonly selfConsumptionRegisters?: readonly number[];
  /**
   * Registers a command changes that going back to self-consumption puts back to the value the
   * device held before control first wrote them (`control_originals`, on disk: a value read
   * after a crash mid-command would be the command's own), e.g. SunSpec 124's ChaGriSet.
   */
  readonly restoredWithSelfConsumption?: readonly number[];
  /** the commands the device's document gives; absent: all four (SunSpec 124) */
  readonly modes?: readonly StorageCommand['mode'][];
  /**
   * What a charge's or discharge's powerW is on the device: the battery's (absent: SunSpec 124 and
   * most documents) or a grid setpoint (Victron's override: the battery then takes the PV surplus too).
   */
  readonly power?: 'battery' | 'grid-setpoint';
  /** the lowest state of charge the device itself keeps, percent, once it told (SunSpec 124 MinRsvPct) */
  readonly minSocPct?: number;
  /** Puts the command on the device: only the registers whose value changes, plus what the life needs. */
  apply(bus: RegisterReader & RegisterWriter, command: StorageCommand): Promise<RegisterWrite[]>;
}
