/**
 * A plan body as a partner sends it (docs/api.md "Plans"), checked
 * slot by slot with a named error for each rule (docs/design.md "Control: operation mode and
 * plans"): UTC intervals on 15-minute boundaries, no overlap, none ending in the past, none more
 * than 7 days ahead, `powerW` for charge and discharge.
 */
import { Type } from '@sinclair/typebox';
import { ApiError, apiError } from '../core/errors.js';
import type { SlotMode, StoredSlot } from '../store/control.js';
import { parseInterval } from '../telemetry/interval.js';

export const SLOT_MS = 15 * 60_000;
export const PLAN_HORIZON_MS = 7 * 86_400_000;
/** 7 days of quarter hours */
export const MAX_SLOTS = 672;
/** a plan body's bytes at most: 672 slots of ~110 bytes written out with spaces (the HTTP route's bodyLimit) */
export const PLAN_BODY_LIMIT = 128 * 1024;
/** the largest battery power a slot may ask, W */
export const MAX_POWER_W = 1_000_000;
/** the plan source the gateway's optimiser writes as */
export const OPTIMISER_SOURCE = 'optimiser';
export const SLOT_MODES: readonly SlotMode[] = ['charge', 'discharge', 'hold', 'self-consumption'];

/** The plan body's schema: the HTTP route and the uplink's cmd/plan check the same (OpenAPI from it). */
export const SlotModeSchema = Type.Union([
  Type.Literal('charge'),
  Type.Literal('discharge'),
  Type.Literal('hold'),
  Type.Literal('self-consumption'),
]);

const Interval = () => Type.String({ maxLength: 100, description: 'start/end in UTC on quarter hours' });

/**
 * A slot as the document shows it: power and target only where the mode takes them, as the
 * check below refuses them elsewhere. The schema is the document's; bodies are read by
 * parseSlots, whose refusals name the slot and the field (SLOT_INVALID, POWER_REQUIRED), which a
 * union's validator could not.
 */
const SlotBodySchema = Type.Union([
  Type.Object(
    {
      interval: Interval(),
      mode: Type.Union([Type.Literal('charge'), Type.Literal('discharge')]),
      powerW: Type.Integer({
        minimum: 1,
        maximum: MAX_POWER_W,
        description: 'battery power, W, always positive',
      }),
      targetSoc: Type.Optional(
        Type.Number({
          minimum: 0,
          maximum: 100,
          description: 'percent: ends a charge (reached) or discharge (fallen to) early',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { interval: Interval(), mode: Type.Union([Type.Literal('hold'), Type.Literal('self-consumption')]) },
    { additionalProperties: false },
  ),
]);

/** marks a body schema that is the document's only: the handler reads the body itself (src/api/http/validators.ts) */
export const CHECKED_BY_HANDLER = 'x-checked-by-handler';

export const PlanBody = Type.Object(
  { slots: Type.Array(SlotBodySchema, { maxItems: MAX_SLOTS }) },
  { additionalProperties: false, [CHECKED_BY_HANDLER]: true },
);

const SLOT_KEYS = ['interval', 'mode', 'powerW', 'targetSoc'];
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A plan body (`{"slots":[…]}`) read member by member: the slots, or a named 400. */
export function parsePlanBody(body: unknown): SlotBody[] {
  if (!isRecord(body)) throw apiError('INVALID_BODY', 'the body must be a JSON object {"slots":[…]}');
  for (const k of Object.keys(body))
    if (k !== 'slots') throw apiError('INVALID_BODY', `the body has no member '${k.slice(0, 40)}'; send {"slots":[…]}`);
  if (body.slots === undefined) throw apiError('MISSING_PARAMETER', 'slots is required: {"slots":[…]}, [] for none');
  return parseSlots(body.slots);
}

/** A plan's slots, whoever sent them (HTTP, the cloud's cmd/plan): their shape and types, each refusal naming slots[i].field. */
export function parseSlots(slots: unknown): SlotBody[] {
  if (!Array.isArray(slots)) throw apiError('INVALID_BODY', 'slots must be a list of slots');
  if (slots.length > MAX_SLOTS)
    throw apiError('INVALID_BODY', `slots holds ${slots.length} slots; at most ${MAX_SLOTS} (7 days of quarter hours)`);
  return slots.map((s: unknown, i) => {
    const at = `slots[${i}]`;
    if (!isRecord(s)) throw apiError('SLOT_INVALID', `${at} must be an object {interval, mode, …}`);
    for (const k of Object.keys(s))
      if (!SLOT_KEYS.includes(k))
        throw apiError('SLOT_INVALID', `${at} has no member '${k.slice(0, 40)}'; allowed: ${SLOT_KEYS.join(', ')}`);
    if (typeof s.interval !== 'string' || s.interval.length > 100)
      throw apiError('SLOT_INVALID', `${at}.interval must be a string start/end in UTC on quarter hours`);
    if (typeof s.mode !== 'string' || !SLOT_MODES.includes(s.mode as SlotMode))
      throw apiError('SLOT_INVALID', `${at}.mode must be one of ${SLOT_MODES.join(', ')}`);
    return s as unknown as SlotBody;
  });
}

export interface SlotBody {
  interval: string;
  mode: SlotMode;
  powerW?: number;
  targetSoc?: number;
}

/**
 * The body's slots, sorted, as the store keeps them (all `pending`). `dropEnded`: a slot that has
 * ended is left out rather than refusing the plan (the optimiser's, made before its solve).
 */
export function checkPlanSlots(slots: readonly SlotBody[], now: number, dropEnded = false): StoredSlot[] {
  const out: StoredSlot[] = [];
  slots.forEach((s, i) => {
    const at = `slots[${i}]`;
    // every edge validates its body by the schema first; this holds for a caller that did not
    // (or whose validator coerced): no string, boolean or infinity becomes a stored number
    if (!SLOT_MODES.includes(s.mode))
      throw apiError('SLOT_INVALID', `${at}.mode must be one of ${SLOT_MODES.join(', ')}`);
    if (s.powerW !== undefined && !(Number.isInteger(s.powerW) && s.powerW >= 1 && s.powerW <= MAX_POWER_W))
      throw apiError('SLOT_INVALID', `${at}.powerW must be a whole number of W, 1..${MAX_POWER_W}`);
    if (s.targetSoc !== undefined && !(typeof s.targetSoc === 'number' && s.targetSoc >= 0 && s.targetSoc <= 100))
      throw apiError('SLOT_INVALID', `${at}.targetSoc must be a number of percent, 0..100`);
    let range: { start: number; end: number };
    try {
      range = parseInterval(s.interval);
    } catch (err) {
      throw new ApiError(400, 'SLOT_INVALID', `${at}.interval: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (range.start % SLOT_MS !== 0 || range.end % SLOT_MS !== 0)
      throw apiError(
        'SLOT_NOT_ALIGNED',
        `${at}.interval "${s.interval}" must start and end on a quarter hour (:00, :15, :30, :45 UTC)`,
      );
    if (range.end <= now) {
      if (dropEnded) return;
      throw apiError('SLOT_IN_PAST', `${at}.interval "${s.interval}" has already ended`);
    }
    if (range.end > now + PLAN_HORIZON_MS)
      throw apiError('SLOT_TOO_FAR', `${at}.interval "${s.interval}" ends more than 7 days ahead`);
    const moves = s.mode === 'charge' || s.mode === 'discharge';
    if (moves && s.powerW === undefined)
      throw apiError('POWER_REQUIRED', `${at}: a ${s.mode} slot needs powerW, the battery power in W (positive)`);
    if (!moves && s.powerW !== undefined) throw apiError('SLOT_INVALID', `${at}: a ${s.mode} slot takes no powerW`);
    if (s.targetSoc !== undefined && !moves)
      throw apiError('SLOT_INVALID', `${at}: targetSoc ends a charge or discharge; a ${s.mode} slot takes none`);
    out.push({
      startMs: range.start,
      endMs: range.end,
      mode: s.mode,
      powerW: s.powerW ?? null,
      targetSoc: s.targetSoc ?? null,
      status: 'pending',
      note: null,
    });
  });
  return sortedWithoutOverlap(out);
}

/** The slots sorted by start; 400 SLOTS_OVERLAP where one starts before the one before it ends (plans, limit schedules). */
export function sortedWithoutOverlap<T extends { startMs: number; endMs: number }>(slots: T[]): T[] {
  slots.sort((a, b) => a.startMs - b.startMs);
  for (let i = 1; i < slots.length; i++)
    if (slots[i]!.startMs < slots[i - 1]!.endMs)
      throw apiError(
        'SLOTS_OVERLAP',
        `two slots overlap at ${new Date(slots[i]!.startMs).toISOString()}: slots must not overlap`,
      );
  return slots;
}
