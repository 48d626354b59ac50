/**
 * Which of the grid operator's controls is in force at a moment, as a pure function of what the
 * server sent, the randomisation drawn for each control and the time (no I/O, no clock), and which
 * Responses are due. The rules are IEEE 2030.5-2018's for DER events (§10.10, §12.1.3) as CSIP-AUS
 * uses them; open-dynamic-export's scheduler (src/sep2/helpers/controlScheduler.ts) was read for
 * how a certified client resolves them:
 * - a control runs from start + its start randomisation to start + duration + its duration
 *   randomisation (randomizeStart/randomizeDuration: a random offset between 0 and the value,
 *   drawn once per control and kept);
 * - Cancelled (2) and Superseded (4) controls stop at once; Cancelled with Randomization (3) stops at
 *   a random moment within the larger of |randomizeStart| and |randomizeDuration| after its status
 *   time;
 * - each limit is decided on its own: among the controls running now that set it, the one of the
 *   program with the lowest primacy wins, then the most recently created (as open-dynamic-export
 *   does per control type); a running control that wins nothing it sets is superseded;
 * - a limit no running control sets takes the DefaultDERControl of the program with the lowest
 *   primacy that has one setting it.
 */
import {
  type ControlBase,
  type DefaultDerControl,
  type DerControl,
  EVENT_STATUS,
  RESPONSE_STATUS,
  type ResponseStatus,
} from './resources.js';

export interface ProgramControls {
  mRID: string;
  primacy: number;
  controls: DerControl[];
  defaultControl?: DefaultDerControl;
}

/** Seconds added to a control's start, end, and (cancelled with randomisation) its stop. */
export interface Randomization {
  start: number;
  end: number;
  cancel: number;
}

export const LIMIT_FIELDS = ['exportW', 'importW', 'generationW', 'loadW', 'connect', 'energize'] as const;
export type LimitField = (typeof LIMIT_FIELDS)[number];

export interface FieldInForce {
  value: number | boolean;
  mRID: string;
  kind: 'control' | 'default';
  /** seconds since the epoch when this control ends (null: the default, no end) */
  until: number | null;
}

export interface Window {
  control: DerControl;
  primacy: number;
  /** seconds since the epoch */
  from: number;
  to: number;
}

export interface InForce {
  fields: Partial<Record<LimitField, FieldInForce>>;
  /** controls running now that win at least one limit */
  running: string[];
  /** controls within their time that win nothing they set: a higher-priority control holds it */
  superseded: string[];
  /** seconds since the epoch of the next start or end of any control (null: none ahead) */
  nextChange: number | null;
}

const NONE: Randomization = { start: 0, end: 0, cancel: 0 };

/** A random offset between 0 and `bound` seconds (negative bounds give negative offsets), whole seconds. */
function offset(bound: number | undefined, random: () => number): number {
  if (!bound) return 0;
  return Math.round(random() * bound) || 0; // never -0
}

/** Draws a control's randomisation (IEEE 2030.5 §12.1.3.2). `random` returns [0, 1). */
export function drawRandomization(c: DerControl, random: () => number): Randomization {
  const cancelBound = Math.max(Math.abs(c.randomizeStart ?? 0), Math.abs(c.randomizeDuration ?? 0));
  return {
    start: offset(c.randomizeStart, random),
    end: offset(c.randomizeDuration, random),
    cancel: offset(cancelBound, random),
  };
}

/** The time a control runs, or null when it does not run at all (cancelled, superseded by the server, invalid). */
export function windowOf(c: DerControl, primacy: number, r: Randomization = NONE): Window | null {
  if (!acts(c.base) || invalidValue(c.base)) return null;
  const from = c.start + r.start;
  let to = c.start + c.duration + r.end;
  switch (c.currentStatus) {
    case EVENT_STATUS.scheduled:
    case EVENT_STATUS.active:
      break;
    case EVENT_STATUS.cancelledWithRandomization:
      to = Math.min(to, c.statusTime + r.cancel);
      break;
    default:
      return null;
  }
  return to > from ? { control: c, primacy, from, to } : null;
}

/** Whether the control sets anything sitegw carries out. */
export function acts(base: ControlBase): boolean {
  return LIMIT_FIELDS.some((f) => base[f] !== undefined);
}

/** A limit in watts below 0 cannot be held (CSIP-AUS limits are magnitudes). */
export function invalidValue(base: ControlBase): boolean {
  return (['exportW', 'importW', 'generationW', 'loadW'] as const).some((f) => (base[f] ?? 0) < 0);
}

const beats = (a: Window, b: Window): boolean =>
  a.primacy !== b.primacy
    ? a.primacy < b.primacy
    : a.control.creationTime !== b.control.creationTime
      ? a.control.creationTime > b.control.creationTime
      : a.control.mRID < b.control.mRID;

/** What is in force at `now` (seconds since the epoch, on the server's clock). */
export function inForce(
  programs: readonly ProgramControls[],
  randomization: ReadonlyMap<string, Randomization>,
  now: number,
): InForce {
  const windows = programs.flatMap((p) =>
    p.controls.flatMap((c) => windowOf(c, p.primacy, randomization.get(c.mRID)) ?? []),
  );
  const current = windows.filter((w) => w.from <= now && now < w.to);
  const fields: Partial<Record<LimitField, FieldInForce>> = {};
  const winners = new Set<string>();
  for (const f of LIMIT_FIELDS) {
    let best: Window | undefined;
    for (const w of current) if (w.control.base[f] !== undefined && (!best || beats(w, best))) best = w;
    if (best) {
      fields[f] = { value: best.control.base[f]!, mRID: best.control.mRID, kind: 'control', until: best.to };
      winners.add(best.control.mRID);
      continue;
    }
    const dflt = [...programs]
      .sort((a, b) => a.primacy - b.primacy)
      .find((p) => p.defaultControl?.base[f] !== undefined && !invalidValue(p.defaultControl.base))?.defaultControl;
    if (dflt) fields[f] = { value: dflt.base[f]!, mRID: dflt.mRID, kind: 'default', until: null };
  }
  const ahead = windows.flatMap((w) => [w.from, w.to]).filter((t) => t > now);
  return {
    fields,
    running: [...winners],
    superseded: current.filter((w) => !winners.has(w.control.mRID)).map((w) => w.control.mRID),
    nextChange: ahead.length > 0 ? Math.min(...ahead) : null,
  };
}

/** What the client has told the server about a control so far. */
export type Phase = 'received' | 'started' | 'completed' | 'cancelled' | 'superseded' | 'refused';

export interface ResponseDue {
  control: DerControl;
  status: ResponseStatus;
}

const FINAL: ReadonlySet<Phase> = new Set(['completed', 'cancelled', 'superseded', 'refused']);

/** Whether the control asks for this response (responseRequired bit 0: received; bit 1: the rest). */
export function wanted(c: DerControl, status: ResponseStatus): boolean {
  if (!c.replyTo) return false;
  if (status === RESPONSE_STATUS.received) return (c.responseRequired & 1) !== 0;
  if (status >= RESPONSE_STATUS.notApplicable) return c.responseRequired !== 0;
  return (c.responseRequired & 2) !== 0;
}

/**
 * The responses due at `now` given what was said before (`phases`, by mRID) and what is in force,
 * and the phases after them. A response the control does not ask for still moves the phase on.
 */
export function responsesDue(
  programs: readonly ProgramControls[],
  randomization: ReadonlyMap<string, Randomization>,
  state: InForce,
  phases: ReadonlyMap<string, Phase>,
  now: number,
): { due: ResponseDue[]; phases: Map<string, Phase> } {
  const next = new Map(phases);
  const due: ResponseDue[] = [];
  const say = (c: DerControl, status: ResponseStatus, phase: Phase) => {
    next.set(c.mRID, phase);
    if (wanted(c, status)) due.push({ control: c, status });
  };
  const running = new Set(state.running);
  const superseded = new Set(state.superseded);
  for (const p of programs) {
    for (const c of p.controls) {
      let phase = next.get(c.mRID);
      if (phase !== undefined && FINAL.has(phase)) continue;
      const stopped = c.currentStatus === EVENT_STATUS.cancelled || c.currentStatus === EVENT_STATUS.superseded;
      const w = windowOf(c, p.primacy, randomization.get(c.mRID));
      if (phase === undefined) {
        if (stopped) {
          // never received while it could run: nothing to answer
          next.set(c.mRID, c.currentStatus === EVENT_STATUS.cancelled ? 'cancelled' : 'superseded');
          continue;
        }
        if (!acts(c.base)) {
          say(c, RESPONSE_STATUS.notApplicable, 'refused');
          continue;
        }
        if (invalidValue(c.base)) {
          say(c, RESPONSE_STATUS.invalid, 'refused');
          continue;
        }
        if (c.start + c.duration <= now) {
          say(c, RESPONSE_STATUS.expired, 'refused');
          continue;
        }
        say(c, RESPONSE_STATUS.received, 'received');
        phase = 'received';
      }
      if (c.currentStatus === EVENT_STATUS.cancelled || c.currentStatus === EVENT_STATUS.cancelledWithRandomization) {
        if (!w || now >= w.to) say(c, RESPONSE_STATUS.cancelled, 'cancelled');
        continue;
      }
      if (c.currentStatus === EVENT_STATUS.superseded || superseded.has(c.mRID)) {
        say(c, RESPONSE_STATUS.superseded, 'superseded');
        continue;
      }
      if (phase === 'received' && running.has(c.mRID)) {
        say(c, RESPONSE_STATUS.started, 'started');
        phase = 'started';
      }
      if (w && now >= w.to) {
        if (phase === 'started') say(c, RESPONSE_STATUS.completed, 'completed');
        else next.set(c.mRID, 'completed');
      }
    }
  }
  return { due, phases: next };
}
