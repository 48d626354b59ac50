/**
 * GET /healthz: for load balancers, uptime checks and the installer's curl. Public, so it says
 * only how the gateway is (ok / degraded / failing), how long it has been up and what is wrong
 * in words, with no device ids, values or other site data. 503 while the main loop is unhealthy.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Health } from '../../ops/health.js';

export const HEALTH_PATH = '/healthz';

const Report = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok', 'degraded', 'failing'] },
    uptimeSeconds: { type: 'integer' },
    problems: { type: 'array', items: { type: 'string' } },
    clock: { type: 'string', description: 'what the gateway trusts for time now (docs/install.md "The clock")' },
  },
  required: ['status', 'uptimeSeconds', 'problems'],
} as const;

export const healthRoutes: FastifyPluginAsync<{ health: Health }> = async (app, { health }) => {
  app.get(
    HEALTH_PATH,
    {
      config: { auth: 'public' },
      schema: {
        tags: ['operations'],
        summary: 'Gateway health without site data',
        response: {
          200: { ...Report, description: 'ok or degraded' },
          503: { ...Report, description: 'failing: the main loop is unhealthy' },
        },
      },
    },
    async (_req, reply) => {
      const r = health.report();
      reply.header('Cache-Control', 'no-store');
      return reply.code(r.status === 'failing' ? 503 : 200).send(r);
    },
  );
};
