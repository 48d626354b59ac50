import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { INCLUDE_GROUPS } from '../../core/channels.js';
import { bucketsGeneration } from '../../store/buckets.js';
import { allPublishTo } from '../../store/publish-to.js';
import { AnswerCache } from '../../telemetry/answer-cache.js';
import { AnswerParts } from '../../telemetry/answer-parts.js';
import { parseInclude, parseInterval, parseResolution } from '../../telemetry/interval.js';
import { TELEMETRY_RESOLUTIONS, type TelemetryQuery, telemetryJson, telemetryPeriods } from '../../telemetry/query.js';
import type { ApiDeps } from './deps.js';
import { deviceRecord } from './device-record.js';
import { principalOf } from './guard.js';
import {
  CommaList,
  DeviceRecord,
  described,
  ErrorResponses,
  IntervalString,
  TelemetryEntry,
  WHOLE_PERIODS,
} from './schemas.js';
import { entriesBody, sendViews } from './telemetry-body.js';
import { seesDevice, seesStream } from './visibility.js';

const READ = { auth: { permission: 'device.read' } } as const;

/** An answer already serialised to its schema's JSON: fastify sends a Buffer as it is, and pipes a stream. */
const sendSerialised = (reply: FastifyReply, body: Buffer | string | Readable) =>
  reply.type('application/json; charset=utf-8').send(body);

/** Periods in an answer the answer cache keeps whole: a day of PT15M, about 22 kB of JSON. */
const CACHED_PERIODS = 96;

export const devicesRoutes: FastifyPluginAsyncTypebox<ApiDeps> = async (app, { site, db, control }) => {
  const answers = new AnswerCache();
  // closed days' entries as JSON, so a question not asked before joins them (answer-parts.ts)
  const parts = new AnswerParts();
  app.get(
    '/api/v1/devices',
    {
      config: READ,
      schema: {
        tags: ['devices'],
        summary: 'List devices',
        description:
          'A partner sees the devices assigned to it, and only its own publishTo entries; the owner sees every device and every entry.',
        response: { 200: described('The devices the caller sees', Type.Object({ devices: Type.Array(DeviceRecord) })) },
      },
    },
    async (req) => {
      const p = principalOf(req);
      const lists = allPublishTo(db);
      return {
        devices: [...site.devices.values()]
          .filter((d) => seesDevice(p, d.config.id))
          .map((d) => deviceRecord(site, d, p, lists.get(d.config.id) ?? [], control)),
      };
    },
  );

  app.get(
    '/api/v1/devices/:synthId/telemetry',
    {
      config: READ,
      schema: {
        tags: ['devices'],
        summary: 'Time-bucketed telemetry of one sensor stream',
        description:
          'synthId is a sensor id from the topology. An id with no stored stream, or of a device the caller does not see, answers 200 with no entries.',
        params: Type.Object({ synthId: Type.String({ minLength: 1, maxLength: 200 }) }),
        querystring: Type.Object({
          interval: IntervalString(
            `ISO 8601 interval in UTC: start/end, start/duration or duration/end. ${WHOLE_PERIODS}`,
          ),
          resolution: Type.Optional(
            Type.String({ enum: [...TELEMETRY_RESOLUTIONS], description: 'PT15M (default), PT1H or P1D' }),
          ),
          include: Type.Optional(
            CommaList(
              'default (power, soc, soh, state) and/or energy (lifetime counters); default: default',
              INCLUDE_GROUPS,
            ),
          ),
        }),
        // no 404: an id without a stream answers 200 with no entries
        // (docs/api.md "GET /api/v1/devices/{synthId}/telemetry")
        response: {
          200: described(
            'Telemetry entries, ascending; empty for an id without a stream',
            Type.Object({ entries: Type.Array(TelemetryEntry) }),
          ),
          400: ErrorResponses[400],
        },
      },
      // entries are built by queryTelemetry to the schema already, and sent as the serialised
      // answer (AnswerCache): for a year of buckets V8's JSON.stringify is several times faster
      // than a schema-compiled serialiser full of optional fields (bench/telemetry-query.ts)
      serializerCompiler: () => (data) => JSON.stringify(data),
    },
    async (req, reply) => {
      // parameters are checked before the stream lookup so a bad request is a 400 whatever the id
      const { start, end } = parseInterval(req.query.interval);
      const resolution = parseResolution(req.query.resolution, TELEMETRY_RESOLUTIONS, 'PT15M');
      const include = parseInclude(req.query.include);
      const stream = site.stream(req.params.synthId);
      // a device the partner was not given answers exactly like one that does not exist
      if (!stream || !seesStream(principalOf(req), site, stream.id)) return { entries: [] };
      // the answer depends on nothing else: the site's zone and soc scale are fixed for the process
      const q: TelemetryQuery = {
        streamId: stream.id,
        deviceId: stream.id,
        deviceKind: stream.deviceKind,
        start,
        end,
        resolution,
        include,
        channels: stream.channels,
        timezone: site.config.site.timezone,
        socScale: site.config.api.socScale,
      };
      // a longer answer is joined from kept days (answer-parts.ts), and sent whole up to a month
      // or so; past that it is written a page at a time as the client takes it (telemetry-body.ts)
      if (telemetryPeriods(q) > CACHED_PERIODS) {
        const body = entriesBody(parts.pieces(db, q));
        return Array.isArray(body) ? sendViews(reply, body) : sendSerialised(reply, body);
      }
      const key = `${stream.id}|${start}|${end}|${resolution}|${[...include].sort().join(',')}`;
      // asked once, the answer is made as it stands and kept nowhere (answer-cache.ts); sent as a
      // Buffer: a string answer was flattened for its length and encoded again by node's writev,
      // 16 kB more garbage a request (bench/README.md "A day not asked before")
      const body = answers.answer(
        key,
        bucketsGeneration(db),
        () => parts.answer(db, q),
        () => Buffer.from(telemetryJson(db, q)),
      );
      return sendSerialised(reply, body);
    },
  );
};
