/**
 * A device profile in the form the engine runs: PDU addresses, defaults applied, units folded
 * into factors, sentinels as raw bits. Built once at start by compile.ts.
 */

import type { DeviceRole } from '../config/types.js';
import {
  type DeviceStatus,
  type GridState,
  NUMERIC_INSTANT_CHANNELS,
  NUMERIC_LIVE_CHANNELS,
  type NumericInstantChannel,
  type NumericLiveChannel,
} from '../core/channels.js';
import type { Order, RegisterType } from '../modbus/codec.js';
import type { CompiledControl } from './control-compile.js';
import type { CompiledLimit } from './limit-compile.js';
import type { RegisterFunction } from './profile-types.js';

/** One value: where to read it and how its bits decode. */
export interface ValueRef {
  fn: RegisterFunction;
  /** PDU address (what goes on the wire) */
  address: number;
  /** registers it occupies */
  count: number;
  type: RegisterType;
  order: Order;
  /** raw bit patterns meaning "not implemented" */
  sentinels: readonly bigint[];
  optional: boolean;
  /** 0 = every poll */
  intervalMs: number;
  /** for errors: the document's address and name */
  label: string;
}

export interface CompiledSource {
  /** one register, or several added up */
  parts: ValueRef[];
  /** registers of the same type subtracted from the parts (import − export magnitudes) */
  minus?: ValueRef[];
  /** fixed scale × unit factor to the spec unit (W, Wh, percent) */
  factor: number;
  scaleFactor?: ValueRef;
  /** added after scaling, in the spec unit (Deye's temperatures are sent as °C + 100) */
  offset?: number;
  sign: 1 | -1;
  absolute: boolean;
  signFrom?: { ref: ValueRef; mask: number };
  /** the source read when this one has no value (older firmware without the register) */
  otherwise?: CompiledSource;
  label: string;
}

export interface CompiledStateRule {
  refs: ValueRef[];
  in?: ReadonlySet<number>;
  anyBits?: number;
  below?: number;
  scale: number;
  state: GridState;
}

/** the channels a role section maps from registers, from the channel table (its live channels included) */
export type InstantKey = NumericInstantChannel | NumericLiveChannel;
export const INSTANT_KEYS: readonly InstantKey[] = [...NUMERIC_INSTANT_CHANNELS, ...NUMERIC_LIVE_CHANNELS];

/** The status register and its table: raw code → state (a code not in it reads `unknown (code N)`). */
export interface CompiledStatus {
  ref: ValueRef;
  states: ReadonlyMap<number, DeviceStatus>;
}

/** One PV string: a pv_module stream of the inverter, as SunSpec 160's modules are. */
export interface CompiledPvString {
  voltage: CompiledSource;
  current: CompiledSource;
  /** where the device gives it; else voltage × current */
  power?: CompiledSource;
}

export interface CompiledRole {
  instant: Partial<Record<InstantKey, CompiledSource>>;
  status?: CompiledStatus;
  inWh?: CompiledSource;
  outWh?: CompiledSource;
  capacityWh?: CompiledSource;
  state?: { rules: CompiledStateRule[]; otherwise: GridState };
  pv?: {
    power_W?: CompiledSource;
    outWh?: CompiledSource;
    strings: CompiledPvString[];
    /** the register with the number of strings the device has: those past it are not shown */
    stringCount?: ValueRef;
  };
}

export interface CompiledMatch {
  ref: ValueRef;
  in?: ReadonlySet<number>;
  range?: readonly [number, number];
  pattern?: RegExp;
  scale: number;
}

export interface CompiledIdentityRegister {
  ref: ValueRef;
  map?: Readonly<Record<string, string>>;
}

export interface DeviceProfile {
  name: string;
  /** the file it came from, for messages */
  file: string;
  manufacturer: string;
  models: readonly string[];
  source: { title: string; version: string; url: string };
  batching: { maxRegisters: number; maxGap: number };
  /** the vendor's own registers on a unit that also serves SunSpec (a device of its own next to the sunspec one) */
  besideSunSpec: boolean;
  identify: {
    manufacturer: string;
    model?: string;
    match: CompiledMatch[];
    /** rules whose answer proves the unit is another kind of device (a register only that kind has): any satisfied, no match */
    unless: CompiledMatch[];
    /** manufacturer: the maker the device names (a battery on another maker's inverter), else identify.manufacturer */
    registers: Partial<Record<'manufacturer' | 'model' | 'serial' | 'version', CompiledIdentityRegister>>;
  };
  roles: Partial<Record<DeviceRole, CompiledRole>>;
  /** how a storage command is put on the device (the `control:` section), when the profile has one */
  control?: CompiledControl;
  /** how an active power limit is put on the device (the `limit:` section), when the profile has one */
  limit?: CompiledLimit;
}
