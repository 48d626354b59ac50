/**
 * PUT / GET / DELETE /api/v1/sites/{siteId}/limits: the site's limit schedule and the limits in
 * force (docs/limits.md, docs/api.md "Site limits"). PUT and DELETE need plan.write and, for a
 * partner, a grant of every inverter of the site (a limit curtails them all); GET needs plan.read.
 * ETag / If-Match as for plans.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { apiError } from '../../core/errors.js';
import {
  getLimitSchedule,
  MAX_LIMIT_SLOTS,
  putLimitSchedule,
  removeLimitSchedule,
  scheduleEtag,
} from '../../limits/schedule.js';
import { LIMIT_SOURCES, type LimitsInForce } from '../../limits/sources.js';
import { inForceBody } from '../../limits/status.js';
import type { StoredLimitSchedule } from '../../store/limits.js';
import { formatInterval } from '../../telemetry/interval.js';
import type { ApiDeps } from './deps.js';
import { principalOf } from './guard.js';
import { described, ErrorResponses } from './schemas.js';
import { seesDevice } from './visibility.js';

const watts = (what: string) => Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000, description: what }));
const SlotBody = Type.Object(
  {
    interval: Type.String({ maxLength: 100, description: 'start/end in UTC, at whole seconds' }),
    exportW: watts('most export at the grid meter, W; 0 = zero export'),
    importW: watts('most import at the grid meter, W'),
    generationW: watts("most AC output of the site's inverters together, W"),
  },
  { additionalProperties: false },
);
const Body = Type.Object(
  { slots: Type.Array(SlotBody, { maxItems: MAX_LIMIT_SLOTS }) },
  { additionalProperties: false },
);
const Source = Type.Union(LIMIT_SOURCES.map((s) => Type.Literal(s)));
const InForce = Type.Object({
  exportW: Type.Union([Type.Integer(), Type.Null()]),
  importW: Type.Union([Type.Integer(), Type.Null()]),
  generationW: Type.Union([Type.Integer(), Type.Null()]),
  sources: Type.Object(
    { exportW: Type.Optional(Source), importW: Type.Optional(Source), generationW: Type.Optional(Source) },
    { description: 'the source of each limit in force' },
  ),
});
const View = Type.Object({
  siteId: Type.String(),
  inForce: InForce,
  source: Type.Optional(Type.String({ description: 'who wrote the schedule: partner:<clientId>, customer' })),
  slots: Type.Array(SlotBody),
});
const Params = Type.Object({ siteId: Type.String({ minLength: 1, maxLength: 200 }) });

export interface SiteLimitsView {
  inForce(): LimitsInForce;
}

export const siteLimitsRoutes: FastifyPluginAsyncTypebox<
  ApiDeps & { now: () => number; siteLimits?: SiteLimitsView }
> = async (app, { site, db, now, siteLimits }) => {
  const path = '/api/v1/sites/:siteId/limits';
  const requireSite = (req: FastifyRequest<{ Params: { siteId: string } }>) => {
    if (req.params.siteId !== site.id)
      throw apiError('SITE_NOT_FOUND', `site '${req.params.siteId.slice(0, 100)}' is not on this gateway`);
  };
  /** a limit curtails every inverter: a partner must be granted them all */
  const requireAllInverters = (req: FastifyRequest) => {
    const p = principalOf(req);
    const missing = site.byRole('inverter').filter((d) => !seesDevice(p, d.config.id));
    if (missing.length > 0)
      throw apiError(
        'LIMITS_NOT_GRANTED',
        `the site's limits curtail every inverter: this client is not granted ${missing.length} of them (the installer assigns them: sitegw clients assign)`,
      );
  };
  const view = (s: StoredLimitSchedule | undefined) => {
    return {
      siteId: site.id,
      inForce: inForceBody(siteLimits?.inForce() ?? {}),
      ...(s ? { source: s.source } : {}),
      slots: (s?.slots ?? []).map((x) => ({
        interval: formatInterval(x.startMs, x.endMs),
        ...(x.exportW !== null ? { exportW: x.exportW } : {}),
        ...(x.importW !== null ? { importW: x.importW } : {}),
        ...(x.generationW !== null ? { generationW: x.generationW } : {}),
      })),
    };
  };

  app.put(
    path,
    {
      config: { auth: { permission: 'plan.write' } },
      schema: {
        tags: ['sites'],
        summary: "Replace the site's limit schedule",
        description:
          'Slots at whole seconds, no overlap, at most 7 days ahead, each with at least one of exportW, importW, generationW; the schedule is replaced whole. ' +
          'At each moment the most restrictive limit of every source (site.yaml, grid operator, schedule, price, fail-safe) is in force. ' +
          'A partner must be granted every inverter of the site. If-Match with the ETag of GET refuses the write (412) when the schedule changed meanwhile.',
        params: Params,
        headers: Type.Object({ 'if-match': Type.Optional(Type.String({ maxLength: 200 })) }),
        body: Body,
        response: {
          200: described('The stored schedule and the limits in force; its ETag in the header', View),
          ...ErrorResponses,
          412: { ...ErrorResponses[404], description: 'If-Match does not match the stored schedule (LIMITS_CHANGED)' },
        },
      },
    },
    async (req, reply) => {
      requireSite(req);
      requireAllInverters(req);
      const p = principalOf(req);
      const source = p.customer ? 'customer' : `partner:${p.clientId}`;
      const s = putLimitSchedule(db, req.body.slots, source, now(), req.headers['if-match']);
      reply.header('ETag', scheduleEtag(s.scheduleId));
      return view(s);
    },
  );

  app.get(
    path,
    {
      config: { auth: { permission: 'plan.read' } },
      schema: {
        tags: ['sites'],
        summary: "The site's limits in force, each with its source, and its limit schedule",
        params: Params,
        response: {
          200: described('The limits in force and the schedule; its ETag in the header', View),
          ...ErrorResponses,
        },
      },
    },
    async (req, reply) => {
      requireSite(req);
      const s = getLimitSchedule(db);
      if (s) reply.header('ETag', scheduleEtag(s.scheduleId));
      return view(s);
    },
  );

  app.delete(
    path,
    {
      config: { auth: { permission: 'plan.write' } },
      schema: {
        tags: ['sites'],
        summary: "Remove the site's limit schedule (site.yaml's limits, prices and the grid operator stay)",
        params: Params,
        response: { 204: Type.Null({ description: 'Removed' }), ...ErrorResponses },
      },
    },
    async (req, reply) => {
      requireSite(req);
      requireAllInverters(req);
      if (!removeLimitSchedule(db)) throw apiError('LIMITS_NOT_FOUND', 'the site has no limit schedule');
      return reply.code(204).send(null);
    },
  );
};
