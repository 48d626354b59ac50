/**
 * What a storage system should do now: the operation mode, the plan's current slot and the latest
 * measurements, clipped to the safety envelope (docs/control.md "The safety envelope"). Pure: no
 * clock, no I/O, so every rule is a unit test.
 */
import type { ControlConfig } from '../config/types.js';
import type { StorageCommand } from '../core/storage-control.js';
import type { OperationMode, StoredSlot } from '../store/control.js';

export interface Measured {
  /** battery aggregate state of charge, percent */
  socPct?: number;
  /** battery aggregate power, W, + charging */
  batteryW?: number;
  /** grid connection point power, W, + importing */
  gridW?: number;
}

/** The device's own limits, where it told them (SunSpec 124 WChaMax, the profile's nameplate). */
export interface Nameplate {
  maxChargeW?: number;
  maxDischargeW?: number;
}

export interface Decision {
  command: StorageCommand;
  /** why the command is less than the slot asked for; null when it is what was asked */
  limited: string | null;
  /** the slot's targetSoc is reached: the rest of the slot holds */
  targetReached: boolean;
}

/** Kept free below the import and export limits: the house moves between two measurements. */
export const LIMIT_MARGIN = { fraction: 0.05, minW: 100 } as const;
/** clipped commands move in these steps */
export const STEP_W = 50;
const margin = (limitW: number) => Math.max(LIMIT_MARGIN.minW, limitW * LIMIT_MARGIN.fraction);

const SELF: Decision = { command: { mode: 'self-consumption' }, limited: null, targetReached: false };

export function decide(
  mode: OperationMode,
  slot: StoredSlot | undefined,
  m: Measured,
  env: ControlConfig,
  plate: Nameplate,
  targetReachedBefore = false,
): Decision {
  if (mode === 'self-consumption') return SELF;
  if (mode === 'backup') {
    // hold the reserve: below it, charge back up (as a charge slot would, envelope and all)
    if (m.socPct === undefined || m.socPct >= env.reserveSoc) return SELF;
    return charge(env.maxChargeW, env.reserveSoc, m, env, plate, false);
  }
  if (!slot || slot.mode === 'self-consumption') return SELF;
  if (slot.mode === 'hold') return { command: { mode: 'hold' }, limited: null, targetReached: false };
  if (slot.mode === 'charge')
    return charge(slot.powerW ?? 0, Math.min(slot.targetSoc ?? 100, env.socMax), m, env, plate, targetReachedBefore);
  return discharge(slot.powerW ?? 0, Math.max(slot.targetSoc ?? 0, env.socMin), m, env, plate, targetReachedBefore);
}

function charge(
  askedW: number,
  targetSoc: number,
  m: Measured,
  env: ControlConfig,
  plate: Nameplate,
  reachedBefore: boolean,
): Decision {
  if (m.socPct === undefined || m.gridW === undefined || m.batteryW === undefined)
    // not a limit: the next reading wakes the executor again (start-up, a silent meter)
    return SELF;
  if (reachedBefore || m.socPct >= targetSoc) return { command: { mode: 'hold' }, limited: null, targetReached: true };
  const why: string[] = [];
  let w = askedW;
  const cap = Math.min(env.maxChargeW, plate.maxChargeW ?? Number.POSITIVE_INFINITY);
  if (w > cap) {
    w = cap;
    why.push(`charge power capped at ${cap} W (control.maxChargeW, nameplate)`);
  }
  // the site without the battery: what the grid would carry if the battery stood still
  const base = m.gridW - m.batteryW;
  const byImport = env.importLimitW - margin(env.importLimitW) - base;
  if (w > byImport) {
    w = byImport;
    why.push(`grid import kept under control.importLimitW ${env.importLimitW} W`);
  }
  if (!env.gridCharge && w > -base) {
    w = -base;
    why.push('charging from PV surplus only (control.gridCharge false)');
  }
  // a clipped power in 50 W steps: the house moves a few watts at every reading, and a write per
  // reading would wear registers some devices keep in flash
  w = why.length ? Math.max(0, Math.floor(w / STEP_W) * STEP_W) : Math.max(0, Math.floor(w));
  return { command: { mode: 'charge', powerW: w }, limited: why.length ? why.join('; ') : null, targetReached: false };
}

function discharge(
  askedW: number,
  floorSoc: number,
  m: Measured,
  env: ControlConfig,
  plate: Nameplate,
  reachedBefore: boolean,
): Decision {
  if (m.socPct === undefined || m.gridW === undefined || m.batteryW === undefined) return SELF;
  if (reachedBefore || m.socPct <= floorSoc) return { command: { mode: 'hold' }, limited: null, targetReached: true };
  const why: string[] = [];
  let w = askedW;
  const cap = Math.min(env.maxDischargeW, plate.maxDischargeW ?? Number.POSITIVE_INFINITY);
  if (w > cap) {
    w = cap;
    why.push(`discharge power capped at ${cap} W (control.maxDischargeW, nameplate)`);
  }
  const base = m.gridW - m.batteryW;
  const byExport = env.exportLimitW - margin(env.exportLimitW) + base;
  if (w > byExport) {
    w = byExport;
    why.push(`grid export kept under control.exportLimitW ${env.exportLimitW} W`);
  }
  w = why.length ? Math.max(0, Math.floor(w / STEP_W) * STEP_W) : Math.max(0, Math.floor(w));
  return {
    command: { mode: 'discharge', powerW: w },
    limited: why.length ? why.join('; ') : null,
    targetReached: false,
  };
}
