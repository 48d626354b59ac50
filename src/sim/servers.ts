/**
 * The simulated site on the network: two Modbus TCP servers (modbus-serial ServerTCP), one for
 * the inverter host (inverter + battery BMS units) and one for the meter host, answering from the
 * SimSite's register images exactly as hardware would (vector.ts says how). For fault tests a
 * server can drop its connections or "reboot" (stop listening for a while, then come back on the
 * same port), and `faults` injects per-unit faults.
 */
import net from 'node:net';
import { ServerTCP } from 'modbus-serial';
import type { Clock } from '../core/clock.js';
import type { SimHost } from './device-images.js';
import { SimFaults } from './faults.js';
import type { SimSite } from './site.js';
import { type SimVector, simVector, siteRefresher } from './vector.js';

export interface SimServerOptions {
  host?: string;
  /** 0 (default) = any free port */
  inverterPort?: number;
  meterPort?: number;
  /** shared with other servers of the same site (e.g. an RTU server), so counts add up */
  faults?: SimFaults;
}

export interface SimEndpoint {
  host: string;
  port: number;
}

export interface SimServers {
  inverter: SimEndpoint;
  meter: SimEndpoint;
  faults: SimFaults;
  /** drop every open connection of a host's server, as a device resetting its sockets does */
  resetConnections(host: SimHost): void;
  /** the host's server goes away (connections dropped, port closed) for downMs, then listens again on the same port */
  reboot(host: SimHost, downMs: number): Promise<void>;
  close(): Promise<void>;
}

const FREE_PORT_ATTEMPTS = 5;

export async function startSimServers(site: SimSite, clock: Clock, opts: SimServerOptions = {}): Promise<SimServers> {
  const bindHost = opts.host ?? '127.0.0.1';
  const refresh = siteRefresher(site, clock);
  const faults = opts.faults ?? new SimFaults();
  const running: Partial<Record<SimHost, ServerTCP>> = {};
  const resetConnections = (host: SimHost) => {
    const server = running[host] as (ServerTCP & { socks?: Map<net.Socket, unknown> }) | undefined;
    for (const sock of server?.socks?.keys() ?? []) sock.destroy();
  };
  const vectors: Record<SimHost, SimVector> = {
    inverter: simVector(site, 'inverter', refresh, {
      transport: 'tcp',
      faults,
      resetConnections: () => resetConnections('inverter'),
    }),
    meter: simVector(site, 'meter', refresh, {
      transport: 'tcp',
      faults,
      resetConnections: () => resetConnections('meter'),
    }),
  };
  const ports: Record<SimHost, number> = { inverter: 0, meter: 0 };
  const stop = async (host: SimHost) => {
    const server = running[host];
    delete running[host];
    if (!server) return;
    resetConnections(host);
    await closeServer(server);
  };
  const closeAll = () => Promise.all([stop('inverter'), stop('meter')]).then(() => undefined);
  try {
    for (const host of ['inverter', 'meter'] as const) {
      const started = await listen(
        vectors[host],
        bindHost,
        (host === 'inverter' ? opts.inverterPort : opts.meterPort) ?? 0,
      );
      running[host] = started.server;
      ports[host] = started.port;
    }
  } catch (err) {
    await closeAll();
    throw err;
  }
  let closing: Promise<void> | undefined;
  return {
    inverter: { host: bindHost, port: ports.inverter },
    meter: { host: bindHost, port: ports.meter },
    faults,
    resetConnections,
    async reboot(host, downMs) {
      await stop(host);
      await new Promise((r) => setTimeout(r, downMs));
      if (closing) return;
      running[host] = (await listen(vectors[host], bindHost, ports[host])).server;
    },
    close: () => (closing ??= closeAll()),
  };
}

/**
 * ServerTCP treats port 0 as "use 502" and never says which port it bound, so a free port is
 * found first with a throwaway net server; if someone grabs it in between, try another.
 */
export async function listen(
  vector: SimVector,
  host: string,
  port: number,
): Promise<{ server: ServerTCP; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const p = port === 0 ? await freePort(host) : port;
    try {
      return { server: await startServer(vector, host, p), port: p };
    } catch (err) {
      const inUse = (err as { code?: unknown }).code === 'EADDRINUSE';
      if (port !== 0 || !inUse || attempt >= FREE_PORT_ATTEMPTS) throw err;
    }
  }
}

function startServer(vector: SimVector, host: string, port: number): Promise<ServerTCP> {
  return new Promise((resolve, reject) => {
    const server = new ServerTCP(vector, { host, port });
    // a client resetting its connection is routine, never a reason to crash the daemon
    server.on('socketError', () => {});
    server.on('error', () => {});
    server.once('initialized', () => resolve(server));
    server.once('serverError', (err) => {
      server.close(() => reject(err));
    });
  });
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen({ port: 0, host }, () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => (port ? resolve(port) : reject(new Error('could not learn a free port'))));
    });
  });
}

function closeServer(server: ServerTCP): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
