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
  /**
   * false: the device's control gives no hold (Huawei, Victron: docs/control.md "Vendor control
   * maps"). A reached target then returns the battery to the device's own logic, and the reserve
   * is the device's own setting in self-consumption.
   */
  holds?: boolean;
}

export interface Decision {
  command: StorageCommand;
  /** why the command is less than the slot asked for; null when it is what was asked */
  limited: string | null;
  /** the slot's targetSoc is reached: the rest of the slot holds */
  targetReached: boolean;
  /** the reserve keeps the battery from discharging now (the next decision's `reserve.held`) */
  reserveHeld?: boolean;
  /**
   * the measurement a charge or discharge waits for: without it the battery is left in
   * self-consumption, and the slot's status says so (executor.ts)
   */
  waitingFor?: 'soc' | 'battery power' | 'grid power';
}

/**
 * The reserve state of charge in force (docs/control.md "The reserve"): no discharge below it.
 * `held`: the last decision kept it, so the battery is let go again only `RESERVE_BAND_PCT` above it.
 */
export interface Reserve {
  socPct: number;
  held: boolean;
}

/**
 * The site's import and export limits in force (src/limits/, docs/limits.md), each with the words
 * that name it: a charge is clipped to the import limit (charging is shed first) and a discharge to
 * the export limit, wherever they are tighter than control's own.
 */
export interface SiteGridLimits {
  importW?: { watts: number; label: string };
  exportW?: { watts: number; label: string };
}

/** Let go of the reserve this far above it: the device's own discharge does not bring it back at every reading. */
export const RESERVE_BAND_PCT = 2;

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
  reserve: Reserve = { socPct: env.reserveSoc, held: false },
  /** a charge slot takes the real PV surplus where it is more than the slot's power (the optimiser's plans) */
  takeSurplus = false,
  grid: SiteGridLimits = {},
): Decision {
  if (mode === 'self-consumption') return keepReserve(m, env, plate, reserve);
  if (mode === 'backup') {
    // below the reserve: charge back up to it (from the grid where control.gridCharge allows,
    // as a charge slot would, envelope and all); at it and above: self-consumption that never
    // discharges below it
    if (m.socPct !== undefined && m.socPct < reserve.socPct) {
      const d = charge(env.maxChargeW, reserve.socPct, m, env, plate, false, false, grid);
      return { ...d, targetReached: false, reserveHeld: true };
    }
    return keepReserve(m, env, plate, reserve);
  }
  if (!slot || slot.mode === 'self-consumption') return keepReserve(m, env, plate, reserve);
  if (slot.mode === 'hold') return { command: { mode: 'hold' }, limited: null, targetReached: false };
  if (slot.mode === 'charge')
    return charge(
      slot.powerW ?? 0,
      Math.min(slot.targetSoc ?? 100, env.socMax),
      m,
      env,
      plate,
      targetReachedBefore,
      takeSurplus,
      grid,
    );
  const floor = Math.max(slot.targetSoc ?? 0, env.socMin, reserve.socPct);
  return discharge(slot.powerW ?? 0, floor, m, env, plate, targetReachedBefore, grid);
}

/**
 * The device's own self-consumption above the reserve; at it (and until `RESERVE_BAND_PCT` above
 * it once held) no discharge: a charge of the PV surplus only, 0 W when there is none.
 */
function keepReserve(m: Measured, env: ControlConfig, plate: Nameplate, reserve: Reserve): Decision {
  const soc = m.socPct;
  if (plate.holds === false) return SELF;
  if (soc === undefined || (reserve.held ? soc >= reserve.socPct + RESERVE_BAND_PCT : soc > reserve.socPct))
    return SELF;
  const d = charge(env.maxChargeW, env.socMax, m, { ...env, gridCharge: false }, plate, false);
  // without readings the device is left to itself (move() gives SELF): nothing held
  return { ...d, limited: null, targetReached: false, reserveHeld: d.command.mode !== 'self-consumption' };
}

/** A limit on the asked power, and the words the slot's status gives when it bites. */
type Limit = [maxW: number, why: string] | false;

/**
 * A charge or discharge of `askedW` within `limits`, or a hold once the SoC has reached `done`.
 * Without readings (start-up, a silent meter) the device is left to itself: not a limit, the next
 * reading wakes the executor again.
 */
function move(
  mode: 'charge' | 'discharge',
  askedW: number,
  m: Measured,
  reached: (socPct: number) => boolean,
  limits: (base: number) => Limit[],
  holds = true,
  takeSurplus = false,
): Decision {
  if (m.socPct === undefined) return { ...SELF, waitingFor: 'soc' };
  if (m.batteryW === undefined) return { ...SELF, waitingFor: 'battery power' };
  if (m.gridW === undefined) return { ...SELF, waitingFor: 'grid power' };
  if (reached(m.socPct))
    return { command: holds ? { mode: 'hold' } : { mode: 'self-consumption' }, limited: null, targetReached: true };
  // the site without the battery: what the grid would carry if the battery stood still
  const base = m.gridW - m.batteryW;
  const why: string[] = [];
  // the PV surplus the site would export without the battery: stored rather than sold for less
  // (in the 50 W steps of a clipped power: the surplus moves at every reading)
  let w = takeSurplus ? Math.max(askedW, Math.floor(-base / STEP_W) * STEP_W) : askedW;
  for (const limit of limits(base)) {
    if (limit && w > limit[0]) {
      w = limit[0];
      why.push(limit[1]);
    }
  }
  // the surplus taken beyond the slot's power is not a limit on what the slot asked
  if (takeSurplus && w >= askedW) why.length = 0;
  // a clipped power in 50 W steps: the house moves a few watts at every reading, and a write per
  // reading would wear registers some devices keep in flash
  w = why.length ? Math.max(0, Math.floor(w / STEP_W) * STEP_W) : Math.max(0, Math.floor(w));
  return { command: { mode, powerW: w }, limited: why.length ? why.join('; ') : null, targetReached: false };
}

function charge(
  askedW: number,
  targetSoc: number,
  m: Measured,
  env: ControlConfig,
  plate: Nameplate,
  reachedBefore: boolean,
  takeSurplus = false,
  grid: SiteGridLimits = {},
): Decision {
  const cap = Math.min(env.maxChargeW, plate.maxChargeW ?? Number.POSITIVE_INFINITY);
  const imp = tighter(env.importLimitW, 'control.importLimitW', grid.importW);
  return move(
    'charge',
    askedW,
    m,
    (soc) => reachedBefore || soc >= targetSoc,
    (base) => [
      [cap, `charge power capped at ${cap} W (control.maxChargeW, nameplate)`],
      [imp.watts - margin(imp.watts) - base, `grid import kept under ${imp.label} ${imp.watts} W`],
      !env.gridCharge && [-base, 'charging from PV surplus only (control.gridCharge false)'],
    ],
    plate.holds !== false,
    takeSurplus,
  );
}

function discharge(
  askedW: number,
  floorSoc: number,
  m: Measured,
  env: ControlConfig,
  plate: Nameplate,
  reachedBefore: boolean,
  grid: SiteGridLimits = {},
): Decision {
  const cap = Math.min(env.maxDischargeW, plate.maxDischargeW ?? Number.POSITIVE_INFINITY);
  const exp = tighter(env.exportLimitW, 'control.exportLimitW', grid.exportW);
  return move(
    'discharge',
    askedW,
    m,
    (soc) => reachedBefore || soc <= floorSoc,
    (base) => [
      [cap, `discharge power capped at ${cap} W (control.maxDischargeW, nameplate)`],
      [exp.watts - margin(exp.watts) + base, `grid export kept under ${exp.label} ${exp.watts} W`],
    ],
    plate.holds !== false,
  );
}

/** control's own limit, or the site's where it is tighter */
function tighter(
  own: number,
  ownLabel: string,
  site: { watts: number; label: string } | undefined,
): { watts: number; label: string } {
  return site && site.watts < own ? site : { watts: own, label: ownLabel };
}
