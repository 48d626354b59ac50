/** The spec's conformance (test/conformance/spec.test.ts runs it), section by section: Decisions (design.md): where the spec is silent. */
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { bearer } from '../../support/auth.js';
import { getJson } from '../../support/demo.js';
import { allNodes } from '../../support/topology.js';
import { tryUpgrade } from '../../support/ws-client.js';
import { api, coveredBy, demo, siteId, streamEnding, TZ, tel, token, wsUrl } from './context.js';

export function specDecisions(): void {
  describe('Decisions (design.md) › partial periods: an entry always stands for its whole period', () => {
    it('telemetry 2026-11-20T00:00Z/2026-11-21T00:00Z at P1D (Europe/Berlin): two whole local days, each as a query for exactly that day answers', async () => {
      const id = streamEnding('__GRID_METER_DERIVED');
      const { body } = await tel(
        id,
        'interval=2026-11-20T00:00:00Z/2026-11-21T00:00:00Z&resolution=P1D&include=default,energy',
      );
      expect(body.entries.map((e: { interval: string }) => e.interval)).toEqual([
        '2026-11-19T23:00:00Z/2026-11-20T23:00:00Z',
        '2026-11-20T23:00:00Z/2026-11-21T23:00:00Z',
      ]);
      for (const e of body.entries) {
        const whole = await tel(id, `interval=${e.interval}&resolution=P1D&include=default,energy`);
        expect(whole.body.entries).toEqual([e]);
      }
    });

    it('savings 2026-11-22T23:00Z/PT1H at P1D: the whole day, label and value', async () => {
      const cut = await api(`/api/v2/sites/${siteId}/savings?interval=2026-11-22T23:00:00Z/PT1H&resolution=P1D`);
      const day = await api(
        `/api/v2/sites/${siteId}/savings?interval=2026-11-22T23:00:00Z/2026-11-23T23:00:00Z&resolution=P1D`,
      );
      expect(cut.body.entries).toEqual(day.body.entries);
      expect(cut.body.entries.map((e: { interval: string }) => e.interval)).toEqual([
        '2026-11-22T23:00:00Z/2026-11-23T23:00:00Z',
      ]);
    });

    it('PT1H: an hour cut at both edges is answered whole', async () => {
      const id = streamEnding('__bb_agg');
      const cut = await tel(id, 'interval=2026-11-23T10:20:00Z/2026-11-23T10:40:00Z&resolution=PT1H');
      expect(cut.body).toEqual((await tel(id, 'interval=2026-11-23T10:00:00Z/PT1H&resolution=PT1H')).body);
    });

    it('P1M: a month cut by the interval is answered whole', async () => {
      const cut = await api(`/api/v2/sites/${siteId}/savings?interval=2026-11-22T23:00:00Z/P1D&resolution=P1M`);
      const month = await api(
        `/api/v2/sites/${siteId}/savings?interval=2026-10-31T23:00:00Z/2026-11-30T23:00:00Z&resolution=P1M`,
      );
      expect(cut.body.entries).toEqual(month.body.entries);
    });

    it('a period still in progress holds the data so far', async () => {
      const today = DateTime.fromMillis(demo.clock.now(), { zone: TZ }).startOf('day');
      const id = streamEnding('__GRID_METER_DERIVED');
      const { body } = await tel(id, `interval=${today.toUTC().toISO()}/PT1H&resolution=P1D`);
      expect(body.entries.map((e: { interval: string }) => e.interval)).toEqual([
        `${today.toUTC().toISO({ suppressMilliseconds: true })}/${today.plus({ days: 1 }).toUTC().toISO({ suppressMilliseconds: true })}`,
      ]);
    });

    it('the rule is written in the OpenAPI descriptions of the interval parameters', async () => {
      const doc = (await getJson(`${demo.url}/openapi.json`)).body;
      for (const p of ['/api/v1/devices/{synthId}/telemetry', '/api/v2/sites/{siteId}/savings']) {
        const interval = doc.paths[p].get.parameters.find((x: { name: string }) => x.name === 'interval');
        expect(interval.description ?? interval.schema.description, p).toMatch(/widened to whole periods/);
      }
    });
  });

  describe('Decisions (design.md) › lenient input where the spec is silent, strict output', () => {
    const expanded = async (q: string) => {
      const r = await api(`/api/v1/sites/${siteId}/topology?${q}`);
      expect(r.status, q).toBe(200);
      return allNodes(r.body.topology).filter((n) => n.kind === 'BMS').length > 1;
    };
    it.each(['compact=true', 'compact=True', 'compact=TRUE', 'compact=1', 'compact=', 'compact', ''])(
      '%s: compact',
      async (q) => {
        expect(await expanded(q)).toBe(false);
      },
    );
    it.each(['compact=false', 'compact=False', 'compact=FALSE', 'compact=0', 'compact=0&compact=false'])(
      '%s: expanded',
      async (q) => {
        expect(await expanded(q)).toBe(true);
      },
    );
    it('compact=yes is a 400 naming what is accepted', async () => {
      const r = await api(`/api/v1/sites/${siteId}/topology?compact=yes`);
      expect(r.body).toMatchObject({
        statusCode: 400,
        code: 'INVALID_PARAMETER',
        message: expect.stringMatching(/true, false, 1 or 0/),
      });
    });
    it('compact is not required in /openapi.json', async () => {
      const doc = (await getJson(`${demo.url}/openapi.json`)).body;
      const compact = doc.paths['/api/v1/sites/{siteId}/topology'].get.parameters.find(
        (x: { name: string }) => x.name === 'compact',
      );
      expect(compact.required).not.toBe(true);
    });
    it('repeated list parameters: include=default&include=energy is include=default,energy', async () => {
      const id = streamEnding('__bb_agg');
      const q = 'interval=2026-11-23T10:00:00Z/PT15M';
      const repeated = await tel(id, `${q}&include=default&include=energy`);
      expect(repeated.status).toBe(200);
      expect(repeated.body).toEqual((await tel(id, `${q}&include=default,energy`)).body);
    });
    it('a scalar parameter repeated: the same value counts once, different values are a 400', async () => {
      const id = streamEnding('__bb_agg');
      expect(
        (await tel(id, 'interval=2026-11-23T10:00:00Z/PT15M&interval=2026-11-23T10:00:00Z/PT15M')).body.entries,
      ).toHaveLength(1);
      expect(
        (await tel(id, 'interval=2026-11-23T10:00:00Z/PT15M&interval=2026-11-23T11:00:00Z/PT15M')).body,
      ).toMatchObject({ statusCode: 400, code: 'INVALID_PARAMETER' });
    });
    it('unknown query parameters are ignored (HTTP)', async () => {
      expect((await tel(streamEnding('__bb_agg'), 'interval=2026-11-23T10:00:00Z/PT15M&foo=1')).status).toBe(200);
      expect((await api(`/api/v1/sites/${siteId}/topology?bar=2`)).status).toBe(200);
    });
    it('WebSocket: unknown parameters ignored, repeated list parameters joined, grid-event means grid-events', async () => {
      for (const q of [
        'streams=grid-events&foo=1',
        'streams=telemetry-realtime&streams=grid-events',
        'streams=grid-event',
      ]) {
        expect(await tryUpgrade(wsUrl(q), bearer(token)), q).toEqual({ open: true });
      }
    });
    it('WebSocket: messages always spell the stream grid-events', () => {
      coveredBy('conformance/spec/auth-events.ts', 'stream: always grid-events');
    });
  });

  describe('Decisions (design.md) › the OpenAPI document is true for every route', () => {
    it('every documented response of every route validates against /openapi.json', () => {
      coveredBy('conformance/openapi.test.ts', 'every documented status of every route');
    });
  });
}
