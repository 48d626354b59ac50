import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { apiError } from '../../core/errors.js';
import { buildTopology } from '../../site/topology.js';
import type { ApiDeps } from './deps.js';
import { principalOf } from './guard.js';
import { described, ErrorResponses, QueryBoolean, SiteRecord, TopologyNode } from './schemas.js';
import { filterTopology, seesStream } from './visibility.js';

const READ = { auth: { permission: 'device.read' } } as const;

export const sitesRoutes: FastifyPluginAsyncTypebox<ApiDeps> = async (app, { site }) => {
  const record = () => ({
    siteId: site.id,
    name: site.config.site.name,
    timezone: site.config.site.timezone,
    currency: site.config.site.currency,
  });

  app.get(
    '/api/v1/sites',
    {
      config: READ,
      schema: {
        tags: ['sites'],
        summary: 'List sites',
        response: { 200: described('The sites of this gateway (one)', Type.Object({ sites: Type.Array(SiteRecord) })) },
      },
    },
    async () => ({ sites: [record()] }),
  );

  app.get(
    '/api/v2/sites',
    {
      config: READ,
      schema: {
        tags: ['sites'],
        summary: "List the customer's site ids",
        response: { 200: described('The site ids', Type.Object({ siteIds: Type.Array(Type.String()) })) },
      },
    },
    async () => ({ siteIds: [site.id] }),
  );

  app.get(
    '/api/v1/sites/:siteId/topology',
    {
      config: READ,
      schema: {
        tags: ['sites'],
        summary: 'Devices of a site and their connections as a tree',
        description: 'A partner sees the devices assigned to it; the owner sees the whole site.',
        params: Type.Object({ siteId: Type.String({ minLength: 1, maxLength: 200 }) }),
        querystring: Type.Object({
          compact: QueryBoolean(true, 'aggregate battery blocks (__bb_agg) and PV optimisers (__dcm)'),
        }),
        response: {
          200: described('The topology tree, rooted at the site', Type.Object({ topology: Type.Ref(TopologyNode) })),
          ...ErrorResponses,
        },
      },
    },
    async (req) => {
      if (req.params.siteId !== site.id)
        throw apiError('SITE_NOT_FOUND', `site '${req.params.siteId}' is not on this gateway`);
      const p = principalOf(req);
      const tree = buildTopology(site, req.query.compact ?? true);
      return { topology: p.devices === 'all' ? tree : filterTopology(tree, (id) => seesStream(p, site, id)) };
    },
  );
};
