/**
 * Cloud limit schedules (docs/mqtt-contract.md "Site limits"): a fleet service publishes the body
 * of `PUT /api/v1/sites/{siteId}/limits` with a `requestId` on `{prefix}/cmd/limits`; the gateway
 * applies the same checks through src/limits/schedule.ts (source `cloud`) and answers on
 * `{prefix}/cmd/limits/response` (or the MQTT 5 Response Topic) with the stored schedule or the
 * error. `"delete": true` instead of `slots` removes it.
 */

import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Database } from 'better-sqlite3';
import { ApiError } from '../core/errors.js';
import { MAX_LIMIT_SLOTS, putLimitSchedule, removeLimitSchedule } from '../limits/schedule.js';
import { storageRefusal } from '../store/storage-faults.js';
import { formatInterval } from '../telemetry/interval.js';
import { lacksRequestId, REQUEST_ID, REQUEST_ID_RULE, requestIdOf } from './commands.js';

/** 2016 slots of about 120 bytes at most */
export const MAX_LIMITS_COMMAND_BYTES = 300_000;

const watts = Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000 }));
const LimitsCommand = Type.Object(
  {
    requestId: Type.String({ pattern: REQUEST_ID.source }),
    slots: Type.Optional(
      Type.Array(
        Type.Object(
          { interval: Type.String({ maxLength: 100 }), exportW: watts, importW: watts, generationW: watts },
          { additionalProperties: false },
        ),
        { maxItems: MAX_LIMIT_SLOTS },
      ),
    ),
    delete: Type.Optional(Type.Literal(true)),
  },
  { additionalProperties: false },
);

interface ScheduleBody {
  scheduleId: string;
  source: string;
  slots: { interval: string; exportW?: number; importW?: number; generationW?: number }[];
}

export type LimitsAnswer =
  | { requestId: string; status: 'accepted'; schedule: ScheduleBody | null }
  | { requestId: string | null; status: 'error'; code: string; message: string };

const refuse = (requestId: string | null, code: string, message: string): LimitsAnswer => ({
  requestId,
  status: 'error',
  code,
  message,
});

/** The answer to one cmd/limits payload; never throws for bad input. */
export function answerLimitsCommand(db: Database, now: number, payload: Buffer): LimitsAnswer {
  if (payload.length > MAX_LIMITS_COMMAND_BYTES)
    return refuse(
      null,
      'INVALID_COMMAND',
      `the command is ${payload.length} bytes; at most ${MAX_LIMITS_COMMAND_BYTES}`,
    );
  let body: unknown;
  try {
    body = JSON.parse(payload.toString('utf8'));
  } catch {
    return refuse(null, 'INVALID_COMMAND', 'the command is not JSON; send {"requestId","slots":[…]}');
  }
  const requestId = requestIdOf(body);
  if (lacksRequestId(body)) return refuse(null, 'INVALID_REQUEST_ID', REQUEST_ID_RULE);
  if (!Value.Check(LimitsCommand, body)) {
    const first = Value.Errors(LimitsCommand, body).First();
    return refuse(
      requestId,
      'INVALID_COMMAND',
      `${first ? `${first.path || '/'}: ${first.message}` : 'invalid'}; send {"requestId","slots":[…]} or {"requestId","delete":true}`,
    );
  }
  const cmd = body as Static<typeof LimitsCommand>;
  if ((cmd.slots === undefined) === (cmd.delete === undefined))
    return refuse(cmd.requestId, 'INVALID_COMMAND', 'give either slots or "delete": true');
  try {
    if (cmd.delete) {
      removeLimitSchedule(db);
      return { requestId: cmd.requestId, status: 'accepted', schedule: null };
    }
    const s = putLimitSchedule(db, cmd.slots!, 'cloud', now);
    return {
      requestId: cmd.requestId,
      status: 'accepted',
      schedule: {
        scheduleId: s.scheduleId,
        source: s.source,
        slots: s.slots.map((x) => ({
          interval: formatInterval(x.startMs, x.endMs),
          ...(x.exportW !== null ? { exportW: x.exportW } : {}),
          ...(x.importW !== null ? { importW: x.importW } : {}),
          ...(x.generationW !== null ? { generationW: x.generationW } : {}),
        })),
      },
    };
  } catch (err) {
    // a slot's rule by its code, a full data disk by name: as HTTP answers them
    const e = err instanceof ApiError ? err : storageRefusal(err);
    if (e) return refuse(cmd.requestId, e.code, e.message);
    throw err;
  }
}
