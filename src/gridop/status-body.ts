/**
 * What a user is shown of the grid operator (docs/grid-operator.md "Health and metrics"): whether
 * its server answers, which control is in force and until when, the meter readings waiting for it
 * and those lost, on the status page, /status.json and the uplink's status message; one shape for
 * all of them, from the client's status().
 */
import { formatInstant } from '../telemetry/interval.js';
import type { GridOperatorStatus } from './client.js';
import { MAX_UNSENT } from './mirror.js';
import { LIMIT_FIELDS } from './schedule.js';

/** the server's clock may differ from ours by this much before health says so (its Time has whole seconds, a read takes some) */
export const CLOCK_OFFSET_PROBLEM_SECONDS = 30;

/** whole seconds, as every instant the API and the uplink send */
const iso = (ms: number | null) => (ms === null ? null : formatInstant(ms));

export type GridOperatorBody = ReturnType<typeof gridOperatorBody>;

export function gridOperatorBody(s: GridOperatorStatus) {
  const l = s.limits;
  const values: Record<string, number | boolean> = {};
  for (const f of LIMIT_FIELDS) if (l?.[f] !== undefined) values[f] = l[f];
  return {
    reachable: s.reachable,
    /** the last successful read of the whole tree, our clock */
    lastContact: iso(s.lastContact),
    lastError: s.lastError,
    clockOffsetSeconds: s.clockOffsetSeconds,
    /** what is in force: a DERControl, the DefaultDERControl, or nothing; until: the next change, server clock */
    control: { kind: l?.kind ?? 'none', id: l?.controlId ?? null, until: iso(l?.until ?? null) },
    /** the operator's values in force (exportW, importW, generationW, loadW, connect, energize) */
    values,
    responsesPending: s.responsesPending,
    /** MirrorUsagePoint readings waiting for the server, in intervals */
    readingsUnsent: s.readingsUnsent,
    /** readings lists (one per point and interval) dropped since the start: metering data the utility never gets */
    readingsDropped: s.readingsDropped,
  };
}

/** The problem health names when the server's clock and ours differ (CSIP-AUS schedules on the server's). */
export function clockOffsetProblem(offsetSeconds: number | null): string | null {
  if (offsetSeconds === null || Math.abs(offsetSeconds) <= CLOCK_OFFSET_PROBLEM_SECONDS) return null;
  const by = Math.round(Math.abs(offsetSeconds));
  return `the wall clock is ${by} s ${offsetSeconds > 0 ? 'behind' : 'ahead of'} the grid operator's server: the operator's controls run on its clock, sitegw's records on its own (check NTP)`;
}

/**
 * The problem health names while an outage is losing meter readings: the utility never gets them
 * (a gap in its metering data), where readings that only wait reach it when the server is back.
 */
export function readingsDroppedProblem(droppedInOutage: number): string | null {
  if (droppedInOutage <= 0) return null;
  return `${droppedInOutage} meter readings for the grid operator dropped: its server has been gone longer than the ${MAX_UNSENT} intervals sitegw keeps, so the utility loses that metering data`;
}
