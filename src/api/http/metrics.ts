/**
 * GET /metrics: Prometheus text format. It needs a bearer token with device.read, like the
 * rest of the API on the same port (Prometheus fetches one itself with its `oauth2:` scrape
 * setting and the client-credentials grant). A partner's token sees the device series of its
 * own devices only; site-wide series (database, WebSocket, process) are not device data.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Metrics } from '../../ops/metrics.js';
import { principalOf } from './guard.js';

export const METRICS_PATH = '/metrics';

export const metricsRoutes: FastifyPluginAsync<{ metrics: Metrics }> = async (app, { metrics }) => {
  app.get(
    METRICS_PATH,
    {
      config: { auth: { permission: 'device.read' } },
      schema: {
        tags: ['operations'],
        summary: 'Prometheus metrics (text exposition format)',
        response: {
          200: {
            description: 'Prometheus text exposition format 0.0.4',
            content: { 'text/plain; version=0.0.4': { schema: { type: 'string' } } },
          },
        },
      },
    },
    async (req, reply) => {
      const { devices } = principalOf(req);
      const text = await metrics.text(devices === 'all' ? undefined : (id) => devices.has(id));
      return reply.header('Content-Type', metrics.contentType).header('Cache-Control', 'no-store').send(text);
    },
  );
};
