import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { apiError } from '../../core/errors.js';
import { SAVINGS_RESOLUTIONS, siteSavings } from '../../tariffs/savings.js';
import { parseInterval, parseResolution } from '../../telemetry/interval.js';
import { ErrorBodySchema } from './errors.js';
import { principalOf } from './guard.js';
import { described, ErrorResponses, IntervalString, WHOLE_PERIODS } from './schemas.js';
import type { ClockedDeps } from './tariffs.js';
import { seesStream } from './visibility.js';

const SavingsResponse = Type.Object({
  currency: Type.String({ description: "ISO 4217: the site's currency, in which savings are given" }),
  entries: Type.Array(
    Type.Object({
      interval: Type.String({
        description: 'the bucket (whole period) in canonical UTC start/end; P1D and P1M on local midnight',
      }),
      savings: Type.Number({
        description:
          "money saved in the bucket: the house's consumption at the import price, minus grid import at the import price plus grid export at the export price",
      }),
      batterySavings: Type.Optional(
        Type.Number({
          description:
            "sitegw addition to the spec, only on a site with batteries: the batteries' part of savings, the grid cost the bucket would have had without them (grid power less the batteries' power, the same prices) minus its cost as operated",
        }),
      ),
    }),
  ),
  skipped: Type.Object(
    {
      noData: Type.Integer({ description: 'closed 15-minute buckets left out because house or grid power is missing' }),
      noPrice: Type.Integer({
        description: 'closed 15-minute buckets left out because the tariff has no price for them',
      }),
      batteryNotCounted: Type.Optional(
        Type.Integer({
          description:
            'only on a site with batteries: counted buckets left out of batterySavings (no battery power stored, or the site without the batteries would have exported where the tariff has no export price)',
        }),
      ),
    },
    {
      description: 'sitegw addition to the spec: 15-minute buckets of the interval that are not in any entry, and why',
    },
  ),
});

export const savingsRoutes: FastifyPluginAsyncTypebox<ClockedDeps> = async (app, { site, db, now }) => {
  app.get(
    '/api/v2/sites/:siteId/savings',
    {
      config: { auth: { permission: 'device.read' } },
      schema: {
        tags: ['sites'],
        summary: 'Cost savings of the site per time bucket',
        description:
          'Per 15-minute bucket: H*pImport - (I*pImport - E*pExport), H house consumption, I grid import, E grid export in kWh from the ' +
          "buckets' mean power, prices from the site's tariff (site.yaml). Buckets are summed into the resolution; an entry holds at least one priced bucket. " +
          'Only buckets that have ended count; the query is widened to whole periods (see interval).',
        params: Type.Object({ siteId: Type.String({ minLength: 1, maxLength: 200 }) }),
        querystring: Type.Object({
          interval: IntervalString(
            `ISO 8601 interval in UTC: start/end or start/duration (duration/end also accepted). ${WHOLE_PERIODS}`,
          ),
          resolution: Type.String({
            enum: [...SAVINGS_RESOLUTIONS],
            description: 'PT15M, PT1H, P1D or P1M (calendar months in the site time zone)',
          }),
        }),
        response: {
          200: described('Savings per period of the resolution', SavingsResponse),
          ...ErrorResponses,
          409: {
            ...ErrorBodySchema,
            description:
              'The site has no usable tariff (none in site.yaml, its dynamic tariff not stored, or in another currency)',
          },
        },
      },
    },
    async (req) => {
      const range = parseInterval(req.query.interval);
      const resolution = parseResolution(req.query.resolution, SAVINGS_RESOLUTIONS, 'PT15M');
      if (req.params.siteId !== site.id)
        throw apiError('SITE_NOT_FOUND', `site '${req.params.siteId}' is not on this gateway`);
      const p = principalOf(req);
      return siteSavings(db, site, { range, resolution, now: now(), sees: (id) => seesStream(p, site, id) });
    },
  );
};
