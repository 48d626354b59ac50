/**
 * PUT / GET / DELETE /api/v1/devices/{synthId}/plan: a storage system's plan (docs/api.md
 * "Plans", docs/design.md "Control: operation mode and plans"). Partner and customer tokens
 * alike: plan.write to change, plan.read to read; a partner sees only its assigned inverter, and
 * any other answers 404 exactly as for reads.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Control, PlanView } from '../../control/control.js';
import { PLAN_BODY_LIMIT, PlanBody, parsePlanBody, SlotModeSchema as SlotMode } from '../../control/plan-body.js';
import { ApiError, apiError } from '../../core/errors.js';
import type { DeviceState } from '../../site/site.js';
import { formatInterval } from '../../telemetry/interval.js';
import type { ApiDeps } from './deps.js';
import { principalOf } from './guard.js';
import { described, ErrorResponses } from './schemas.js';
import { seesDevice } from './visibility.js';

const SlotView = Type.Object({
  interval: Type.String(),
  mode: SlotMode,
  powerW: Type.Optional(Type.Integer()),
  targetSoc: Type.Optional(Type.Number()),
  status: Type.Union([
    Type.Literal('pending'),
    Type.Literal('active'),
    Type.Literal('done'),
    Type.Literal('limited'),
    Type.Literal('failed'),
    Type.Literal('skipped'),
  ]),
  note: Type.Optional(
    Type.String({ description: 'why the slot was limited, failed or skipped, or what it waits for while pending' }),
  ),
  measuredPowerW: Type.Optional(
    Type.Number({ description: 'past slots: mean battery power measured over the slot, W, + charging' }),
  ),
  measuredCoverage: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 1,
      description:
        'beside measuredPowerW: the share of the slot its mean covers, 0 to 1; below 1 when the gateway or the battery readings were away for part of the slot, the mean being over the time seen',
    }),
  ),
});

const Plan = Type.Object({
  deviceId: Type.String(),
  planId: Type.String(),
  source: Type.String({ description: 'partner:<clientId>, customer or optimiser' }),
  createdAt: Type.String({ format: 'date-time' }),
  slots: Type.Array(SlotView),
});

const Params = Type.Object({ synthId: Type.String({ minLength: 1, maxLength: 200 }) });
/** an unknown or unassigned device (404), or one that is no storage system (400 NOT_A_STORAGE) */
const NotFound = {
  400: { ...ErrorResponses[400], description: 'Not a storage system (NOT_A_STORAGE)' },
  404: ErrorResponses[404],
};

function view(p: PlanView) {
  return {
    deviceId: p.deviceId,
    planId: p.planId,
    source: p.source,
    createdAt: new Date(p.createdMs).toISOString(),
    slots: p.slots.map((s, i) => {
      const m = p.measured[i];
      return {
        interval: formatInterval(s.startMs, s.endMs),
        mode: s.mode,
        ...(s.powerW !== null ? { powerW: s.powerW } : {}),
        ...(s.targetSoc !== null ? { targetSoc: s.targetSoc } : {}),
        status: s.status,
        ...(s.note !== null ? { note: s.note } : {}),
        ...(m !== undefined
          ? { measuredPowerW: Math.round(m.meanW * 10) / 10, measuredCoverage: Math.round(m.coverage * 1000) / 1000 }
          : {}),
      };
    }),
  };
}

/** Who a plan's change names: the plan's source, the mode's changed_by. */
function sourceOf(req: Parameters<typeof principalOf>[0]): string {
  const p = principalOf(req);
  return p.customer ? 'customer' : `partner:${p.clientId}`;
}

/** The storage system the caller may plan, or the 404 an unknown or unassigned one answers. */
function storageFor(control: Control | undefined, req: FastifyRequest<{ Params: { synthId: string } }>): DeviceState {
  const id = req.params.synthId;
  const device = control?.storageOf(id);
  if (!control || !device || !seesDevice(principalOf(req), device.config.id))
    throw apiError('DEVICE_NOT_FOUND', `no device or sensor '${id.slice(0, 100)}' on this site`);
  if (!control.isStorage(device))
    throw apiError(
      'NOT_A_STORAGE',
      `'${id.slice(0, 100)}' is not a storage system: plans go to an inverter with batteries`,
    );
  return device;
}

export const planRoutes: FastifyPluginAsyncTypebox<ApiDeps> = async (app, { control }) => {
  const path = '/api/v1/devices/:synthId/plan';
  app.put(
    path,
    {
      config: { auth: { permission: 'plan.write' } },
      bodyLimit: PLAN_BODY_LIMIT,
      schema: {
        tags: ['devices'],
        summary: "Replace a storage system's plan",
        description:
          'synthId is the inverter or any of its sensors. Slots on quarter hours, no overlap, at most 7 days ahead; the executor clips each to the safety envelope. ' +
          'If-Match with the ETag of GET refuses the write (412) when the plan changed meanwhile. A plan switches a storage system in self-consumption to operationMode plan.',
        params: Params,
        headers: Type.Object({ 'if-match': Type.Optional(Type.String({ maxLength: 200 })) }),
        body: PlanBody,
        response: {
          200: described('The stored plan; its ETag in the header', Plan),
          ...ErrorResponses,
          409: { ...ErrorResponses[404], description: 'Control is off on this gateway (CONTROL_DISABLED)' },
          412: { ...ErrorResponses[404], description: 'If-Match does not match the stored plan (PLAN_CHANGED)' },
        },
      },
    },
    async (req, reply) => {
      const device = storageFor(control, req);
      const stored = control!.putPlan(device, parsePlanBody(req.body), sourceOf(req), req.headers['if-match']);
      reply.header('ETag', stored.etag);
      return view(stored);
    },
  );

  app.get(
    path,
    {
      config: { auth: { permission: 'plan.read' } },
      schema: {
        tags: ['devices'],
        summary: "A storage system's plan, with each slot's status and measured power",
        params: Params,
        response: { 200: described('The plan; its ETag in the header', Plan), ...NotFound },
      },
    },
    async (req, reply) => {
      const device = storageFor(control, req);
      const stored = control!.plan(device);
      if (!stored) throw apiError('PLAN_NOT_FOUND', `storage system '${device.config.id}' has no plan`);
      reply.header('ETag', stored.etag);
      return view(stored);
    },
  );

  app.delete(
    path,
    {
      config: { auth: { permission: 'plan.write' } },
      schema: {
        tags: ['devices'],
        summary: "Remove a storage system's plan: self-consumption from now on",
        params: Params,
        response: { 204: Type.Null({ description: 'Removed' }), ...NotFound },
      },
    },
    async (req, reply) => {
      const device = storageFor(control, req);
      if (!control!.deletePlan(device, undefined, sourceOf(req)))
        throw new ApiError(404, 'PLAN_NOT_FOUND', `storage system '${device.config.id}' has no plan`);
      return reply.code(204).send(null);
    },
  );
};
