/**
 * The hand-off to the site-limits loop (src/limits/, docs/design.md "Site limits and the grid
 * operator"): the grid operator's limits in force, as a pure function of what is in force
 * (schedule.ts). `limits/` takes these as one source among the others (site.yaml, schedules,
 * prices, the fail-safe) and holds the most restrictive value of each; this folder never imports
 * limits' internals, and limits reads nothing of IEEE 2030.5.
 */
import type { ControlValues } from './resources.js';
import { type InForce, LIMIT_FIELDS } from './schedule.js';

export interface GridOperatorLimits extends ControlValues {
  source: 'grid-operator';
  /**
   * the mRIDs of the controls these values come from, controls before defaults, joined with ','
   * (each limit is decided on its own, so two controls can share the moment); null when none
   */
  controlId: string | null;
  /** 'control' when any value comes from a DERControl, 'default' when all come from DefaultDERControls */
  kind: 'control' | 'default' | 'none';
  /** ms since the epoch (server clock) when these values next change, null when nothing is scheduled */
  until: number | null;
}

export function limitsOf(state: InForce): GridOperatorLimits {
  const out: GridOperatorLimits = { source: 'grid-operator', controlId: null, kind: 'none', until: null };
  const controls: string[] = [];
  const defaults: string[] = [];
  for (const f of LIMIT_FIELDS) {
    const v = state.fields[f];
    if (!v) continue;
    if (f === 'connect' || f === 'energize') out[f] = v.value as boolean;
    else out[f] = v.value as number;
    const list = v.kind === 'control' ? controls : defaults;
    if (!list.includes(v.mRID)) list.push(v.mRID);
  }
  const ids = [...controls, ...defaults];
  if (ids.length > 0) out.controlId = ids.join(',');
  out.kind = controls.length > 0 ? 'control' : defaults.length > 0 ? 'default' : 'none';
  if (state.nextChange !== null) out.until = state.nextChange * 1000;
  return out;
}

/** Whether two hand-offs say the same (the client emits only changes). */
export function sameLimits(a: GridOperatorLimits | undefined, b: GridOperatorLimits): boolean {
  if (!a) return false;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]) as Set<keyof GridOperatorLimits>;
  for (const k of keys) if (a[k] !== b[k]) return false;
  return true;
}

/** The limits the site-limits loop holds (exportW, importW, generationW), W, as plain values. */
export interface SiteLimitValues {
  exportW?: number;
  importW?: number;
  generationW?: number;
}

/**
 * What the site-limits loop is to hold for the operator's limits (docs/grid-operator.md "At the
 * meter"): export, import and generation as they are. `connect: false` or `energize: false` asks
 * the site to leave the grid; sitegw has no switch it can open, so it does what is safe with what
 * it can write: no generation and no export (the inverters at 0 W, the battery's discharge clipped
 * to no export). `loadW` has no capability to act on and is left out.
 */
export function siteLimitValues(l: GridOperatorLimits | undefined): SiteLimitValues {
  if (!l) return {};
  const out: SiteLimitValues = {};
  if (l.exportW !== undefined) out.exportW = l.exportW;
  if (l.importW !== undefined) out.importW = l.importW;
  if (l.generationW !== undefined) out.generationW = l.generationW;
  if (l.connect === false || l.energize === false) {
    out.generationW = 0;
    out.exportW = 0;
  }
  return out;
}
