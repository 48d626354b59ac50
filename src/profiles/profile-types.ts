/**
 * A device profile as written in device-profiles/<name>.yaml, after schema validation.
 * src/profiles/schema.ts holds the rules; src/profiles/compile.ts turns this into the engine's
 * resolved form (PDU addresses, units folded into factors, defaults applied).
 */
import type { GridState } from '../core/channels.js';
import type { DeviceRole } from '../config/types.js';
import type { ByteOrder, RegisterType, WordOrder } from '../modbus/codec.js';

export type RegisterFunction = 'holding' | 'input';

/** Where a value lives and how its bits read. */
export interface RegisterSpec {
  /** register number as the document writes it (see defaults.addressBase) */
  address?: number;
  /** addresses of registers of the same kind that are added up (one per phase) */
  sum?: number[];
  function?: RegisterFunction;
  type?: RegisterType;
  /** registers, for type string */
  length?: number;
  wordOrder?: WordOrder;
  byteOrder?: ByteOrder;
  /** raw values meaning "not implemented"; quoted for 64-bit values */
  sentinels?: (number | string)[];
  /** the document's name of the register, shown in errors */
  label?: string;
  /** a read failing with a Modbus exception leaves the value absent instead of failing the poll */
  optional?: boolean;
  /** read this register only every N seconds (slow values: SoH, capacity); default every poll */
  pollIntervalSeconds?: number;
}

/** A value that feeds a channel, a counter or the battery capacity. */
export interface SourceSpec extends RegisterSpec {
  unit: string;
  /** fixed factor applied to the raw value (a document's "gain 1000" is scale 0.001) */
  scale?: number;
  /** SunSpec-style scale-factor register: value × 10^sf */
  scaleFactor?: RegisterSpec;
  /** -1 when the device counts the other way round than docs/design.md */
  sign?: 1 | -1;
  /** take the magnitude (a device reporting a counter with a spurious sign) */
  absolute?: boolean;
  /** the value is a magnitude and a status register's bits say the direction */
  signFrom?: RegisterSpec & { negativeMask: number };
  /** where the value comes from when this register is absent (refused, or a not-available value) */
  otherwise?: SourceSpec;
}

export interface StateRule {
  registers: RegisterSpec[];
  /** every register's value is one of these */
  in?: number[];
  /** every register's value has one of these bits set */
  anyBits?: number;
  /** every register's value (scaled by `scale`) is below this */
  below?: number;
  scale?: number;
  state: GridState;
}

export interface StateSpec {
  rules: StateRule[];
  otherwise: GridState;
}

export interface RoleSpec {
  power_W?: SourceSpec;
  power_AC_W?: SourceSpec;
  power_DC_W?: SourceSpec;
  soc?: SourceSpec;
  soh?: SourceSpec;
  inWh?: SourceSpec;
  outWh?: SourceSpec;
  capacityWh?: SourceSpec;
  state?: StateSpec;
  pv?: { power_W?: SourceSpec; outWh?: SourceSpec };
}

export interface MatchSpec extends RegisterSpec {
  in?: number[];
  range?: [number, number];
  pattern?: string;
  scale?: number;
}

export interface IdentityRegister extends RegisterSpec {
  /** raw value → text, for devices that report a model code */
  map?: Record<string, string>;
}

export interface IdentifySpec {
  manufacturer: string;
  model?: string;
  match: MatchSpec[];
  registers?: { model?: IdentityRegister; serial?: IdentityRegister; version?: IdentityRegister };
}

export interface ProfileFile {
  name: string;
  manufacturer: string;
  models: string[];
  source: { title: string; version: string; url: string; notes?: string };
  defaults?: {
    function?: RegisterFunction;
    wordOrder?: WordOrder;
    byteOrder?: ByteOrder;
    /** 1 when the document numbers registers from 1 (the PDU address is one less) */
    addressBase?: 0 | 1;
    sentinels?: Partial<Record<RegisterType, (number | string)[]>>;
  };
  batching?: { maxRegisters?: number; maxGap?: number };
  /** the device also serves SunSpec on the same unit; this profile reads the vendor's registers next to it */
  besideSunSpec?: boolean;
  identify: IdentifySpec;
  roles: Partial<Record<DeviceRole, RoleSpec>>;
}
