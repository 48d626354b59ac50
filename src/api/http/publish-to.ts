/**
 * PATCH /api/v1/devices/{synthId}: the owner, through an app holding a customer token with
 * device.write, names the partners that receive the device's realtime telemetry (docs/api.md
 * "PATCH /api/v1/devices/{synthId}"). The list is replaced whole, stored with an audit row, and logged.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { REALTIME_STREAM } from '../../auth/service.js';
import { ApiError, apiError } from '../../core/errors.js';
import { publishToOf, replacePublishTo } from '../../store/publish-to.js';
import type { ApiDeps } from './deps.js';
import { deviceRecord } from './device-record.js';
import { principalOf } from './guard.js';
import { DeviceRecord, described, ErrorResponses, OperationModeSchema } from './schemas.js';

/** The streams a device can be published to (docs/api.md "Device publish list": `telemetry-realtime` is shown). */
export const PUBLISHABLE = [REALTIME_STREAM] as const;

const PatchBody = Type.Object(
  {
    operationMode: Type.Optional(
      OperationModeSchema(
        "storage systems only: self-consumption (the device's own logic), plan (follow the plan), backup (charged back up to the reserve, never below it), optimise (the gateway's optimiser plans it: docs/optimiser.md)",
      ),
    ),
    reserveSoc: Type.Optional(
      Type.Number({
        description:
          'storage systems only: the reserve state of charge, percent, that no discharge goes below (docs/control.md "The reserve"); within control.socMin..socMax, else 400 RESERVE_OUT_OF_RANGE',
      }),
    ),
    publishTo: Type.Optional(
      Type.Array(
        Type.Object(
          {
            clientId: Type.String({ minLength: 1, maxLength: 64, description: 'a registered client id' }),
            data: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
              minItems: 1,
              maxItems: 8,
              description: `streams: ${PUBLISHABLE.join(', ')}`,
            }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 200, description: 'replaces the whole list; [] removes every partner' },
      ),
    ),
  },
  {
    additionalProperties: false,
    // the document says what the handler checks: a generated client (or the fuzzer) must not think {} valid
    minProperties: 1,
    description: 'publishTo, operationMode, reserveSoc or several; an empty body is refused (MISSING_PARAMETER)',
  },
);

export const publishToRoute: FastifyPluginAsyncTypebox<ApiDeps> = async (app, { site, db, auth, control }) => {
  app.patch(
    '/api/v1/devices/:synthId',
    {
      config: { auth: { permission: 'device.write', customer: true } },
      schema: {
        tags: ['devices'],
        summary: "Set which partners receive a device's realtime telemetry",
        description:
          'Needs a customer token (authorization-code flow) with svc/device.write. synthId is a device id or one of its sensor ids; ' +
          'the list applies to the device. The whole publishTo list is replaced.',
        params: Type.Object({ synthId: Type.String({ minLength: 1, maxLength: 200 }) }),
        body: PatchBody,
        response: {
          200: described('The device record with its new publishTo list', DeviceRecord),
          ...ErrorResponses,
          409: {
            ...ErrorResponses[404],
            description:
              'operationMode: control is off (CONTROL_DISABLED), or optimise while the optimiser is not running (OPTIMISER_UNAVAILABLE)',
          },
        },
      },
    },
    async (req) => {
      const { operationMode, reserveSoc, publishTo } = req.body;
      if (operationMode === undefined && reserveSoc === undefined && publishTo === undefined)
        throw apiError('MISSING_PARAMETER', 'the body needs publishTo, operationMode or reserveSoc');
      const id = req.params.synthId;
      const deviceId = site.devices.has(id) ? id : site.stream(id)?.deviceId;
      const device = deviceId === undefined ? undefined : site.devices.get(deviceId);
      if (!device) throw apiError('DEVICE_NOT_FOUND', `no device or sensor '${id.slice(0, 100)}' on this site`);

      const p = principalOf(req);
      if (operationMode !== undefined || reserveSoc !== undefined) {
        const storage = control?.storageOf(id);
        if (!control || !storage || !control.isStorage(storage))
          throw apiError(
            'NOT_A_STORAGE',
            `'${id.slice(0, 100)}' is not a storage system: operationMode and reserveSoc apply to an inverter with batteries`,
          );
        const by = p.customer ? 'customer' : `partner:${p.clientId}`;
        // the reserve first: a refused one leaves the mode unchanged too
        if (reserveSoc !== undefined) control.setReserve(storage, reserveSoc, by);
        if (operationMode !== undefined) control.setMode(storage, operationMode, by);
      }
      if (publishTo === undefined) return deviceRecord(site, device, p, publishToOf(db, device.config.id), control);
      const seen = new Set<string>();
      const entries = publishTo.map((e, i) => {
        if (seen.has(e.clientId))
          throw new ApiError(
            400,
            'DUPLICATE_CLIENT',
            `publishTo[${i}]: client '${e.clientId}' is listed twice; give each client once with all its streams`,
          );
        seen.add(e.clientId);
        if (!auth.clientExists(e.clientId))
          throw new ApiError(
            400,
            'UNKNOWN_CLIENT',
            `publishTo[${i}].clientId: '${e.clientId}' is not a client registered on this gateway`,
          );
        const unknown = e.data.find((d) => !(PUBLISHABLE as readonly string[]).includes(d));
        if (unknown !== undefined)
          throw new ApiError(
            400,
            'UNKNOWN_STREAM',
            `publishTo[${i}].data: '${unknown.slice(0, 64)}' is not a stream; use ${PUBLISHABLE.join(', ')}`,
          );
        return { clientId: e.clientId, data: [...new Set(e.data)] };
      });

      const change = replacePublishTo(db, device.config.id, entries, p.clientId, auth.now());
      req.log.info(
        { deviceId: change.deviceId, byClient: change.byClient, before: change.before, after: change.after },
        'publishTo changed',
      );
      return deviceRecord(site, device, p, change.after, control);
    },
  );
};
