import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Requirement } from '../../auth/bearer.js';
import type { TariffQuota } from '../../config/types.js';
import { pageTokenKey, TARIFF_KINDS, type TariffMeta, type TariffValue } from '../../store/tariffs.js';
import {
  MAX_ABS_PRICE,
  MAX_NAME_LENGTH,
  MAX_VALUES_PER_REQUEST,
  parseCreateBody,
  parsePatchBody,
} from '../../tariffs/body.js';
import { MAX_TOKEN_LENGTH, readPageToken, signPageToken } from '../../tariffs/page-token.js';
import { firstCursor, readPage } from '../../tariffs/pages.js';
import { createTariff, patchTariff, requireTariff, type TariffCaller } from '../../tariffs/write.js';
import { formatInterval, parseInterval } from '../../telemetry/interval.js';
import type { ApiDeps } from './deps.js';
import { ErrorBodySchema } from './errors.js';
import { principalOf } from './guard.js';
import { described, ErrorResponses, IntervalString } from './schemas.js';

export interface ClockedDeps extends ApiDeps {
  /** the daemon clock, ms: "now" of the default page and of savings */
  now: () => number;
}

export interface TariffDeps extends ClockedDeps {
  quota: TariffQuota;
}

/** The token's client, and whether it is a customer token (the site owner's, which reaches every tariff). */
function callerOf(req: FastifyRequest): TariffCaller {
  const p = principalOf(req);
  return { clientId: p.clientId, siteOwner: p.customer };
}

/** Real time for the daily quota, however fast the demo's site clock runs. */
const limitsNow = (quota: TariffQuota) => ({ quota, nowMs: Date.now() });

const Price = (which: string) =>
  Type.Number({
    description: `${which} price per kWh in the tariff's currency; negative allowed, |price| <= ${MAX_ABS_PRICE}`,
  });

const VALUE_INTERVAL =
  'ISO 8601 interval (start/end or start/duration, with a UTC offset) on quarter hours, 15 minutes to 7 days long; answered in canonical UTC';
const ValueInterval = () => IntervalString(VALUE_INTERVAL);
const IMPORT = Price('import (buying)');
const EXPORT = Price('export (feed-in)');

/**
 * A value as each tariff kind has it (tariffs/body.ts): kind import carries importPrice alone,
 * export exportPrice alone, both the two; the document says so rather than two optional prices.
 */
const ValueOf = {
  import: Type.Object({ interval: ValueInterval(), importPrice: IMPORT }, { additionalProperties: false }),
  export: Type.Object({ interval: ValueInterval(), exportPrice: EXPORT }, { additionalProperties: false }),
  both: Type.Object(
    { interval: ValueInterval(), importPrice: IMPORT, exportPrice: EXPORT },
    { additionalProperties: false },
  ),
} as const;
const AnyValue = Type.Union([ValueOf.import, ValueOf.export, ValueOf.both], {
  description: "a value of the tariff's kind: importPrice for import, exportPrice for export, both for both",
});

const Values = <T extends TSchema>(item: T) =>
  Type.Array(item, {
    maxItems: MAX_VALUES_PER_REQUEST,
    description:
      'Non-overlapping price intervals. A PATCH value replaces the stored values it overlaps, which it (with the other values of the request) must cover entirely.',
  });

const Meta = {
  name: Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH }),
  currency: Type.String({ description: 'ISO 4217 code', example: 'EUR' }),
  timezone: Type.String({ description: 'IANA time zone of the tariff’s market', example: 'Europe/Berlin' }),
  kind: Type.String({ enum: [...TARIFF_KINDS], description: 'which prices the values carry: import, export or both' }),
};

/**
 * What a request may name, as src/tariffs/body.ts checks it: the currencies and zones this node
 * knows (ISO 4217 through Intl; the IANA zones in their canonical spelling, which the server
 * also accepts in other cases and aliases and answers canonical).
 */
const Named = {
  name: Meta.name,
  currency: Type.String({ enum: Intl.supportedValuesOf('currency'), description: 'ISO 4217 code', example: 'EUR' }),
  timezone: Type.String({
    enum: ['UTC', ...Intl.supportedValuesOf('timeZone')],
    description:
      'IANA time zone of the tariff’s market (another spelling of a zone is accepted and answered canonical)',
    example: 'Europe/Berlin',
  }),
};
const CreateBody = Type.Union(
  TARIFF_KINDS.map((kind) =>
    Type.Object(
      { ...Named, kind: Type.Literal(kind), values: Type.Optional(Values(ValueOf[kind])) },
      { additionalProperties: false },
    ),
  ),
  { description: 'A tariff; its values carry the prices its kind names' },
);
const PatchBody = Type.Object({ values: Values(AnyValue) }, { additionalProperties: false });
const TariffIdParams = Type.Object({ tariffId: Type.String({ minLength: 1, maxLength: 200 }) });
const Written = {
  inserted: Type.Integer({ description: 'values stored by this request' }),
  replaced: Type.Integer({ description: 'stored values they replaced' }),
};

const PageSchema = Type.Object({
  tariffId: Type.String(),
  ...Meta,
  interval: Type.String({
    description: 'the 7-day window of this page, canonical UTC; a value is on the page whose window holds its start',
  }),
  // as stored: the prices of the tariff's kind (the bodies above say which)
  values: Type.Array(
    Type.Object(
      { interval: Type.String(), importPrice: Type.Optional(IMPORT), exportPrice: Type.Optional(EXPORT) },
      { additionalProperties: false },
    ),
  ),
  nextToken: Type.Union([Type.String(), Type.Null()], {
    description: 'opaque token for the 7 days before this page; null on the last page',
  }),
});

/** A write past the client's quotas (site.yaml limits.dynamicTariffs) stores nothing. */
const QuotaResponses = {
  409: {
    ...ErrorBodySchema,
    description:
      'TARIFF_LIMIT_REACHED: the client owns its most tariffs, or the tariff would hold more values than allowed',
  },
  429: {
    ...ErrorBodySchema,
    description:
      'TARIFF_QUOTA_EXCEEDED: the client stored its most values of the last 24 hours; Retry-After says when enough are free',
  },
};

const READ: Requirement = { permission: 'device.read' };
const WRITE: Requirement = { permission: 'device.write' };

/**
 * POST, PATCH and GET of dynamic tariffs. The bodies are checked by src/tariffs/body.ts, field
 * by field, rather than by the route schema: the app's ajv coerces types (null → 0 would
 * become a price) and names only the first path segment; the schema stays for the OpenAPI
 * document.
 */
export const tariffsRoutes: FastifyPluginAsyncTypebox<TariffDeps> = async (app, { db, now, quota }) => {
  const key = () => pageTokenKey(db);
  const valueOut = (v: TariffValue) => ({
    interval: formatInterval(v.start, v.end),
    ...(v.importPrice !== undefined ? { importPrice: v.importPrice } : {}),
    ...(v.exportPrice !== undefined ? { exportPrice: v.exportPrice } : {}),
  });
  const metaOut = (t: TariffMeta) => ({
    tariffId: t.id,
    name: t.name,
    currency: t.currency,
    timezone: t.timezone,
    kind: t.kind,
  });
  const bodyChecked = () => () => true;

  app.post(
    '/api/v1/dynamicTariffs',
    {
      config: { auth: WRITE },
      validatorCompiler: bodyChecked,
      schema: {
        tags: ['tariffs'],
        summary: 'Create a dynamic tariff, optionally with its first values',
        body: CreateBody,
        response: {
          201: described(
            'The tariff was created (Location names it)',
            Type.Object({ tariffId: Type.String(), ...Meta, ...Written }),
          ),
          400: ErrorResponses[400],
          ...QuotaResponses,
        },
      },
    },
    async (req, reply) => {
      const created = createTariff(db, parseCreateBody(req.body), callerOf(req), limitsNow(quota), now());
      reply.code(201).header('location', `/api/v1/dynamicTariffs/${created.id}`);
      return { ...metaOut(created), inserted: created.inserted, replaced: created.replaced };
    },
  );

  app.patch(
    '/api/v1/dynamicTariffs/:tariffId',
    {
      config: { auth: WRITE },
      validatorCompiler: bodyChecked,
      schema: {
        tags: ['tariffs'],
        summary: 'Add or replace values of a dynamic tariff',
        params: TariffIdParams,
        body: PatchBody,
        response: {
          200: described('The values were stored', Type.Object({ tariffId: Type.String(), ...Written })),
          ...ErrorResponses,
          ...QuotaResponses,
        },
      },
    },
    async (req) => {
      const caller = callerOf(req);
      const tariff = requireTariff(db, req.params.tariffId, caller);
      const result = patchTariff(db, tariff.id, parsePatchBody(req.body, tariff.kind), caller, limitsNow(quota));
      return { tariffId: tariff.id, ...result };
    },
  );

  app.get(
    '/api/v1/dynamicTariffs/:tariffId',
    {
      config: { auth: READ },
      schema: {
        tags: ['tariffs'],
        summary: 'Tariff metadata and one 7-day page of its values',
        description:
          'Without interval: the 7 days up to the current quarter hour, nextToken walking back through the stored history. ' +
          'With interval: the latest 7 days inside it, each nextToken 7 days further back until interval.start. nextToken wins over interval.',
        params: TariffIdParams,
        querystring: Type.Object({
          // no pattern: a nextToken wins over interval, which is then not read at all (docs/api.md)
          interval: Type.Optional(
            Type.String({
              description:
                'ISO 8601 interval: start/end, start/duration or duration/end; not read when nextToken is given',
              example: '2026-11-01T00:00:00Z/P7D',
            }),
          ),
          nextToken: Type.Optional(
            Type.String({ maxLength: MAX_TOKEN_LENGTH, description: 'nextToken of the previous page' }),
          ),
        }),
        response: { 200: described('The tariff metadata and one 7-day page of values', PageSchema), ...ErrorResponses },
      },
    },
    async (req) => {
      const { tariffId } = req.params;
      const { interval, nextToken } = req.query;
      // parameters first, so a malformed request is a 400 whatever the id
      const cursor =
        nextToken !== undefined
          ? readPageToken(key(), tariffId, nextToken)
          : firstCursor(now(), interval !== undefined ? parseInterval(interval) : undefined);
      const tariff = requireTariff(db, tariffId, callerOf(req));
      const page = readPage(db, tariff.id, cursor);
      return {
        ...metaOut(tariff),
        interval: formatInterval(page.window.start, page.window.end),
        values: page.values.map(valueOut),
        nextToken: page.next ? signPageToken(key(), tariff.id, page.next) : null,
      };
    },
  );
};
