/**
 * The API port's connection slots on /metrics (docs/prometheus-grafana.md): what admission counts
 * (connections.ts) beside the sockets behind it, so a slot held for a connection that is gone
 * shows as a difference, and the addresses holding the most. The invariant harness
 * (test/attack/admission-invariants.test.ts) checks these against the kernel's own table.
 */
import type { FastifyInstance } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import type { Connections } from './connections.js';

/** addresses listed at most, the ones holding the most first: a LAN has few, an attack many */
const TOP_ADDRESSES = 32;

const NAMES = {
  slots: 'sitegw_http_connection_slots',
  sockets: 'sitegw_http_connection_sockets',
  upgraded: 'sitegw_http_connection_websockets',
  byAddress: 'sitegw_http_connection_slots_by_address',
} as const;

export function slotMetrics(registry: Registry, conns: Connections, app: FastifyInstance): void {
  const registers = [registry];
  new Gauge({
    name: NAMES.slots,
    help: 'Connection slots of the API port held now (limits.http.maxConnections)',
    registers,
    collect() {
      this.set(conns.stats().slots);
    },
  });
  new Gauge({
    name: NAMES.sockets,
    help: 'Open sockets behind the held connection slots; below the slots only while a closed socket is being forgotten',
    registers,
    collect() {
      this.set(conns.stats().sockets);
    },
  });
  new Gauge({
    name: NAMES.upgraded,
    help: 'Connection slots held by upgraded connections (WebSockets)',
    registers,
    collect() {
      this.set(conns.stats().upgraded);
    },
  });
  new Gauge({
    name: NAMES.byAddress,
    help: `Connection slots held by each address (the ${TOP_ADDRESSES} holding the most; limits.http.maxConnectionsPerAddress)`,
    labelNames: ['address'],
    registers,
    collect() {
      this.reset();
      const top = [...conns.stats().perAddress].sort((a, b) => b[1] - a[1]).slice(0, TOP_ADDRESSES);
      for (const [address, n] of top) this.set({ address }, n);
    },
  });
  app.addHook('onClose', (_app, done) => {
    for (const n of Object.values(NAMES)) registry.removeSingleMetric(n);
    done();
  });
}
