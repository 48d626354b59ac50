/**
 * The grid operator's client on /metrics (docs/grid-operator.md "Health and metrics"): whether its
 * server answers, and which kind of control is in force until when. Read from status() at each
 * scrape, so nothing here can go stale.
 */
import { Gauge, type Registry } from 'prom-client';
import type { GridOperatorStatus } from './client.js';

export const GRIDOP_METRICS = ['sitegw_gridop_reachable', 'sitegw_gridop_control_until_seconds'] as const;

/** Registers the gauges; the function returned removes them (the feature's stop). */
export function registerGridOpMetrics(registry: Registry, status: () => GridOperatorStatus): () => void {
  new Gauge({
    name: GRIDOP_METRICS[0],
    help: "1 while the grid operator's server answered the last read, 0 while it does not",
    registers: [registry],
    collect() {
      this.set(status().reachable ? 1 : 0);
    },
  });
  new Gauge({
    name: GRIDOP_METRICS[1],
    help: "When the grid operator's limits in force next change, seconds since the epoch on the server's clock, by kind (control: a DERControl, default: the DefaultDERControl); absent while nothing is scheduled",
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      this.reset();
      const l = status().limits;
      if (l && l.kind !== 'none' && l.until !== null) this.set({ kind: l.kind }, Math.round(l.until / 1000));
    },
  });
  return () => {
    for (const m of GRIDOP_METRICS) registry.removeSingleMetric(m);
  };
}
