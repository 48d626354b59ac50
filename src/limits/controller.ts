/**
 * One step of the loop that holds the site's limits (docs/limits.md "How a limit is held"). Pure:
 * no clock, no I/O, so every rule is a unit test.
 *
 * What the meter and the inverters read give the site's own draw: house = grid + Σ inverter output
 * (grid + importing; the battery of a hybrid is on its DC side). The meter and the inverters are
 * read at different moments, and an output that steps between them (a limit taking effect, or
 * lifted) makes that poll's house wrong by the whole step, too big or too small by the order of
 * the reads; a cap moved by it is a new step a lag later, which the next poll may catch the same
 * way, and the loop rings (an export of the step, or PV held back to nothing). So a poll alone
 * does not move the cap: the house taken is the median of this poll's, the poll's before and the
 * one the commands in force were decided on. A house that changed is followed once two polls
 * agree (at the nearer of the two), a poll caught mid-step is not followed at all. The first poll
 * with nothing decided yet takes the lower of its two. The inverters together may then deliver at
 * most
 *   house + exportW − margin      (export at the meter at most exportW)
 *   generationW                   (the inverters' output at most generationW)
 * whichever is lower: the cap. The cap is a function of the house, not of the last command, so a
 * step in a limit or in the house is followed in one step, without the integrator's overshoot, and
 * the cap never asks for less output than the limit needs (an inverter producing less than its
 * share is not limited further).
 *
 * The battery first: the cap is on the inverters' AC output, so a hybrid's battery, on its DC side,
 * still charges from PV (its own self-consumption, or a plan's charge), and an AC-coupled battery's
 * charge is part of the house: PV is curtailed only for the surplus the battery does not take.
 * An inverter that stopped answering is left out: the meter reads its output with the house's, so
 * house + exportW of the others' readings is what the others may deliver whatever it does now
 * (counted at its last reading instead, a drop since then would be shared out again and exported).
 * An inverter with its own export limiter is not given a share of the cap (the feature writes it the
 * export limit, which it holds at its own meter). The others get their rating's share of the cap,
 * or, where the own limiters deliver less than theirs (a smaller or shaded array), the cap less what
 * those deliver now, shared by rating: held to their shares alone they left the cap unused and the
 * site curtailed more than the limit needed. Never less than the share, so the own limiter is not
 * chased: while it can raise its output (the export under its limit) it does, and the others fall
 * back to their shares.
 * Limits never command a discharge or an import: charging is shed first for an import limit (by
 * control's executor, which clips every charge to it and says so), and an import over `importW`
 * the house alone draws is reported, not acted on.
 */
import type { PowerLimitCommand } from '../core/active-power-limit.js';
import type { LimitInForce, LimitName, LimitsInForce } from './sources.js';

/** Kept below an export limit, as a fraction of the inverters' rating: the house moves between two readings. */
export const MARGIN_FRACTION = 0.005;

export interface InverterState {
  id: string;
  ratedW: number;
  /** AC output now, W, + delivering */
  acW: number;
  /**
   * its limit is its own export limiter (a device-export-limit map): the feature writes it the
   * export limit in force, not a share of the cap, so its output is what it is
   */
  ownLimiter?: boolean;
}

export interface LoopInput {
  limits: LimitsInForce;
  /** at the grid meter, W, + importing */
  gridW: number;
  inverters: readonly InverterState[];
  /** the house of the poll before (houseOf), W; none: this poll's alone */
  houseBeforeW?: number;
  /** the house the commands in force were decided on (the last decision's houseW), W */
  houseHeldW?: number;
  /**
   * what the inverters left out of `inverters` (they stopped answering) delivered when last read,
   * W. Their output now is in the meter's reading, so the house and the export cap of the others
   * need none of it; a generation limit is theirs less it
   */
  silentW?: number;
}

export interface LoopDecision {
  /** what the inverters together may deliver, W; null: unlimited */
  capW: number | null;
  commands: { id: string; command: PowerLimitCommand }[];
  /** the limit that sets the cap, with its source; null when none binds */
  binding: ({ limit: LimitName } & LimitInForce) | null;
  /** the site's own draw the step acted on, W (grid + output; see the module's comment for which poll's) */
  houseW: number;
  /** import over importW, W */
  importOverW: number;
}

export function decideLimits(i: LoopInput): LoopDecision {
  const ratedW = i.inverters.reduce((a, x) => a + x.ratedW, 0);
  const houseW = houseTaken(houseOf(i.gridW, i.inverters), i.houseBeforeW, i.houseHeldW);
  const importOverW = i.limits.importW ? Math.max(0, i.gridW - i.limits.importW.watts) : 0;
  const caps: { limit: LimitName; capW: number; f: LimitInForce }[] = [];
  const exp = i.limits.exportW;
  if (exp) caps.push({ limit: 'exportW', capW: houseW + exp.watts - MARGIN_FRACTION * ratedW, f: exp });
  const gen = i.limits.generationW;
  if (gen) caps.push({ limit: 'generationW', capW: gen.watts - (i.silentW ?? 0), f: gen });
  caps.sort((a, b) => a.capW - b.capW);
  const lowest = caps[0];
  const unlimited = (): LoopDecision => ({
    capW: null,
    commands: i.inverters.map((x) => ({ id: x.id, command: { kind: 'none' } })),
    binding: null,
    houseW,
    importOverW,
  });
  if (!lowest) return unlimited();
  const invCap = Math.max(0, lowest.capW);
  if (invCap >= ratedW) return unlimited();
  // what the own limiters deliver is theirs; the others share the rest of the cap
  const ownW = i.inverters.reduce((a, x) => a + (x.ownLimiter ? Math.max(0, x.acW) : 0), 0);
  const sharedCap = Math.max(0, invCap - ownW);
  const sharedRatedW = i.inverters.reduce((a, x) => a + (x.ownLimiter ? 0 : x.ratedW), 0);
  const share = (x: InverterState) => {
    const rated = Math.floor((invCap * x.ratedW) / ratedW);
    if (x.ownLimiter || sharedRatedW <= 0) return rated;
    return Math.max(rated, Math.min(x.ratedW, Math.floor((sharedCap * x.ratedW) / sharedRatedW)));
  };
  return {
    capW: invCap,
    // shares of the rating: each inverter's limit is a percentage of its own rating on the device
    commands: i.inverters.map((x) => ({ id: x.id, command: { kind: 'limit', watts: share(x) } })),
    binding: { limit: lowest.limit, ...lowest.f },
    houseW,
    importOverW,
  };
}

/** The site's own draw one poll read, W: the meter plus what the inverters deliver. */
export function houseOf(gridW: number, inverters: readonly Pick<InverterState, 'acW'>[]): number {
  return gridW + inverters.reduce((a, x) => a + Math.max(0, x.acW), 0);
}

/** The house a step acts on: see the module's comment. */
function houseTaken(now: number, before: number | undefined, held: number | undefined): number {
  if (before === undefined) return now;
  if (held === undefined) return Math.min(now, before);
  return Math.max(Math.min(now, before), Math.min(Math.max(now, before), held));
}

/** The fail-safe as commands: `watts` shared by rating. */
export function failSafeCommands(
  inverters: readonly Pick<InverterState, 'id' | 'ratedW'>[],
  watts: number,
): { id: string; command: PowerLimitCommand }[] {
  const ratedW = inverters.reduce((a, x) => a + x.ratedW, 0);
  return inverters.map((x) => ({
    id: x.id,
    command: { kind: 'limit', watts: ratedW > 0 ? Math.floor((watts * x.ratedW) / ratedW) : 0 },
  }));
}
