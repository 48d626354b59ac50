/**
 * The simulated site on the network: two Modbus TCP servers (modbus-serial ServerTCP), one for
 * the inverter host (inverter + battery BMS units) and one for the meter host, answering from the
 * SimSite's register images exactly as hardware would.
 *
 * Answers:
 *   FC3 holding registers: the unit's SunSpec image; outside it → exception 2 (illegal address);
 *       more than 125 registers → exception 3.
 *   FC4 input registers, coils, discrete inputs and every write → exception 1 (illegal function):
 *       SunSpec lives in holding registers only, and a device that answered FC4 with the same
 *       image would hide a profile that polls the wrong function code.
 *   a unit id with no device behind it → exception 0x0B (gateway target failed to respond), so a
 *       scan moves on at once instead of waiting for a timeout.
 * Before answering, the site is brought to clock.now() (at most once per clock millisecond), so
 * values follow an accelerated clock without a timer of their own.
 */
import net from 'node:net';
import { ServerTCP } from 'modbus-serial';
import type { Clock } from '../core/clock.js';
import { MODBUS_EXCEPTION, ModbusException, type RegisterBank } from './bank.js';
import type { SimHost, SimSite } from './site.js';

export interface SimServerOptions {
  host?: string;
  /** 0 (default) = any free port */
  inverterPort?: number;
  meterPort?: number;
}

export interface SimEndpoint {
  host: string;
  port: number;
}

export interface SimServers {
  inverter: SimEndpoint;
  meter: SimEndpoint;
  close(): Promise<void>;
}

const MAX_READ = 125;
const FREE_PORT_ATTEMPTS = 5;

export async function startSimServers(site: SimSite, clock: Clock, opts: SimServerOptions = {}): Promise<SimServers> {
  const host = opts.host ?? '127.0.0.1';
  let lastMs = Number.NaN;
  const refresh = () => {
    const now = clock.now();
    const ms = Math.floor(now);
    if (ms === lastMs) return;
    lastMs = ms;
    site.update(now);
  };

  const started: ServerTCP[] = [];
  const closeAll = () => Promise.all(started.map(closeServer)).then(() => undefined);
  try {
    const inv = await listen(vectorFor(site, 'inverter', refresh), host, opts.inverterPort ?? 0);
    started.push(inv.server);
    const met = await listen(vectorFor(site, 'meter', refresh), host, opts.meterPort ?? 0);
    started.push(met.server);
    let closing: Promise<void> | undefined;
    return {
      inverter: { host, port: inv.port },
      meter: { host, port: met.port },
      close: () => (closing ??= closeAll()),
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

function vectorFor(site: SimSite, host: SimHost, refresh: () => void) {
  const bank = (unitID: number): RegisterBank => {
    const b = site.unit(host, unitID);
    if (!b) throw new ModbusException(MODBUS_EXCEPTION.GATEWAY_TARGET_FAILED, `no unit ${unitID} on the ${host} host`);
    return b;
  };
  const illegalFunction = () => {
    throw new ModbusException(MODBUS_EXCEPTION.ILLEGAL_FUNCTION, 'only holding registers (FC3) are served');
  };
  // arities matter: modbus-serial picks its synchronous path (throw → exception reply) by them
  return {
    getMultipleHoldingRegisters: (addr: number, len: number, unitID: number): number[] => {
      const b = bank(unitID);
      if (len > MAX_READ) throw new ModbusException(MODBUS_EXCEPTION.ILLEGAL_DATA_VALUE, `read of ${len} registers exceeds ${MAX_READ}`);
      refresh();
      return b.read(addr, len);
    },
    getHoldingRegister: (addr: number, unitID: number): number => {
      const b = bank(unitID);
      refresh();
      return b.read(addr, 1)[0];
    },
    getMultipleInputRegisters: (_addr: number, _len: number, _unitID: number): number[] => illegalFunction(),
    getInputRegister: (_addr: number, _unitID: number): number => illegalFunction(),
    getCoil: (_addr: number, _unitID: number): boolean => illegalFunction(),
    getDiscreteInput: (_addr: number, _unitID: number): boolean => illegalFunction(),
    setCoil: (_addr: number, _value: boolean, _unitID: number): void => illegalFunction(),
    setRegister: (_addr: number, _value: number, _unitID: number): void => illegalFunction(),
    setRegisterArray: (_addr: number, _value: number[], _unitID: number): void => illegalFunction(),
  };
}

/**
 * ServerTCP treats port 0 as "use 502" and never says which port it bound, so a free port is
 * found first with a throwaway net server; if someone grabs it in between, try another.
 */
async function listen(vector: ReturnType<typeof vectorFor>, host: string, port: number): Promise<{ server: ServerTCP; port: number }> {
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

function startServer(vector: ReturnType<typeof vectorFor>, host: string, port: number): Promise<ServerTCP> {
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
