/**
 * Cloud plans (docs/mqtt-contract.md "Plans"): a fleet service publishes the HTTP plan body on
 * `{prefix}/cmd/plan` with a `requestId` and the `deviceId` of the storage system; the gateway
 * applies the same schema and the same checks as `PUT …/plan` and answers on
 * `{prefix}/cmd/plan/response` (or the MQTT 5 Response Topic) with the stored plan or the error.
 * `"delete": true` instead of `slots` removes the plan; an empty `slots` is refused (a plan has a
 * slot; a fleet service's bug that sends none must not wipe the plan in force). The requestId
 * (commands.ts) makes a command idempotent: one the gateway already acted on is answered from
 * what it did then, and nothing changes.
 */
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Control, PlanView } from '../control/control.js';
import { parseSlots } from '../control/plan-body.js';
import { ApiError } from '../core/errors.js';
import type { PlanRequestRow } from '../store/control.js';
import { storageRefusal } from '../store/storage-faults.js';
import { formatInterval } from '../telemetry/interval.js';
import { lacksRequestId, REQUEST_ID, REQUEST_ID_RULE, requestIdOf } from './commands.js';

/** A command is small: 672 slots of about 100 bytes each at most. */
export const MAX_PLAN_COMMAND_BYTES = 100_000;

const PlanCommand = Type.Object(
  {
    requestId: Type.String({ pattern: REQUEST_ID.source }),
    deviceId: Type.String({ minLength: 1, maxLength: 200 }),
    // read by parseSlots, as HTTP's are: each refusal names the slot and its field
    slots: Type.Optional(Type.Array(Type.Unknown())),
    delete: Type.Optional(Type.Literal(true)),
  },
  { additionalProperties: false },
);

export type PlanAnswer =
  | { requestId: string; status: 'accepted'; plan: ReturnType<typeof planBody> | null }
  | { requestId: string | null; status: 'error'; code: string; message: string };

export function planBody(p: PlanView) {
  return {
    deviceId: p.deviceId,
    planId: p.planId,
    source: p.source,
    createdAt: new Date(p.createdMs).toISOString(),
    slots: p.slots.map((s) => ({
      interval: formatInterval(s.startMs, s.endMs),
      mode: s.mode,
      ...(s.powerW !== null ? { powerW: s.powerW } : {}),
      ...(s.targetSoc !== null ? { targetSoc: s.targetSoc } : {}),
      status: s.status,
    })),
  };
}

const refuse = (requestId: string | null, code: string, message: string): PlanAnswer => ({
  requestId,
  status: 'error',
  code,
  message,
});

/** The answer to one cmd/plan payload; never throws for bad input. */
export function answerPlanCommand(control: Control | undefined, payload: Buffer): PlanAnswer {
  if (payload.length > MAX_PLAN_COMMAND_BYTES)
    return refuse(null, 'INVALID_COMMAND', `the command is ${payload.length} bytes; at most ${MAX_PLAN_COMMAND_BYTES}`);
  let body: unknown;
  try {
    body = JSON.parse(payload.toString('utf8'));
  } catch {
    return refuse(null, 'INVALID_COMMAND', 'the command is not JSON; send {"requestId","deviceId","slots":[…]}');
  }
  const requestId = requestIdOf(body);
  if (lacksRequestId(body)) return refuse(null, 'INVALID_REQUEST_ID', REQUEST_ID_RULE);
  if (!Value.Check(PlanCommand, body)) {
    const first = Value.Errors(PlanCommand, body).First();
    return refuse(
      requestId,
      'INVALID_COMMAND',
      `${first ? `${first.path || '/'}: ${first.message}` : 'invalid'}; send {"requestId","deviceId","slots":[…]} or {"requestId","deviceId","delete":true}`,
    );
  }
  const cmd = body as Static<typeof PlanCommand>;
  if ((cmd.slots === undefined) === (cmd.delete === undefined))
    return refuse(cmd.requestId, 'INVALID_COMMAND', 'give either slots or "delete": true');
  if (cmd.slots?.length === 0)
    return refuse(
      cmd.requestId,
      'INVALID_COMMAND',
      'slots is empty: a plan has at least one slot; send "delete": true to remove the plan',
    );
  const done = control?.planRequest(cmd.requestId);
  if (control && done) return duplicate(control, cmd.requestId, done);
  const device = control?.storageOf(cmd.deviceId);
  if (!control || !device || !control.isStorage(device))
    return refuse(cmd.requestId, 'DEVICE_NOT_FOUND', `no storage system '${cmd.deviceId.slice(0, 100)}' on this site`);
  try {
    if (cmd.delete) {
      control.deletePlan(device, cmd.requestId, 'cloud');
      return { requestId: cmd.requestId, status: 'accepted', plan: null };
    }
    return {
      requestId: cmd.requestId,
      status: 'accepted',
      plan: planBody(control.putPlan(device, parseSlots(cmd.slots), 'cloud', undefined, cmd.requestId)),
    };
  } catch (err) {
    // a full data disk is answered by name with the request's id, as HTTP's 503 is
    const e = err instanceof ApiError ? err : storageRefusal(err);
    if (e) return refuse(cmd.requestId, e.code, e.message);
    throw err;
  }
}

/**
 * A command whose requestId the gateway already acted on (a resend after no answer came, a
 * broker's second delivery): the plan it stored, as stored now, while that plan is in force;
 * after a removal, the same answer; once a later command replaced or removed that plan, a named
 * refusal rather than putting the old plan back.
 */
function duplicate(control: Control, requestId: string, done: PlanRequestRow): PlanAnswer {
  if (done.planId === null) return { requestId, status: 'accepted', plan: null };
  const device = control.storageOf(done.deviceId);
  const now = device ? control.plan(device) : undefined;
  if (now?.planId === done.planId) return { requestId, status: 'accepted', plan: planBody(now) };
  return refuse(
    requestId,
    'DUPLICATE_REQUEST',
    `requestId '${requestId}' stored plan ${done.planId} for '${done.deviceId}' at ${new Date(done.atMs).toISOString()}, since replaced or removed; nothing changed (a new plan needs a new requestId)`,
  );
}
