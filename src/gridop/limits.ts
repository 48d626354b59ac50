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
