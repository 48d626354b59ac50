import { ModbusError, toModbusError } from './errors.js';
import { ModbusRTU } from './modbus-serial.js';
import { type BusRequest, type Origin, QueuedBus } from './queued-bus.js';
import { ReconnectBackoff, type ReconnectOptions, withTimeout } from './reconnect.js';
import type { UnitBackoffOptions } from './unit-backoff.js';

export interface TcpBusOptions extends ReconnectOptions {
  host: string;
  port: number;
  /** per request unless the device gives its own, real ms: a network timeout does not speed up with the demo clock */
  timeoutMs: number;
  backoff?: UnitBackoffOptions;
}

/** Consecutive timeouts (of any unit, with no answer in between) after which the socket is presumed dead and replaced. */
const DEAD_SOCKET_TIMEOUTS = 3;

/**
 * One Modbus TCP connection shared by every unit behind it (a device, or a Modbus TCP gateway to
 * an RS-485 line). Requests go one at a time (QueuedBus): many cheap gateways and inverters
 * mishandle concurrent transactions. A socket the device closes or resets fails the request in
 * flight at once as a `connection` error (instead of leaving it to time out), and the next
 * request reconnects.
 */
export class TcpBus extends QueuedBus {
  private client: ModbusRTU | null = null;
  /** the current connection's fate: a close fails the request in flight on it */
  private link: Link | null = null;
  private timeoutsInRow = 0;
  private readonly reconnect: ReconnectBackoff;

  constructor(private readonly tcp: TcpBusOptions) {
    super(`tcp://${tcp.host}:${tcp.port}`, { timeoutMs: tcp.timeoutMs, backoff: tcp.backoff });
    this.reconnect = new ReconnectBackoff(tcp);
  }

  protected async transact(req: BusRequest, timeoutMs: number, origin: Origin): Promise<number[]> {
    const client = await this.connected(timeoutMs);
    client.setID(req.unitId);
    client.setTimeout(timeoutMs);
    try {
      if (req.fn === 'write') {
        const res = await untilClosed(this.link!, client.writeRegisters(req.address, [...req.values]), this.name);
        this.timeoutsInRow = 0;
        if (res.address !== req.address || res.length !== req.values.length)
          throw new ModbusError(
            'protocol',
            `wrote ${req.values.length} registers at ${req.address}, the answer confirms ${res.length} at ${res.address}`,
          );
        return [];
      }
      const call =
        req.fn === 'holding'
          ? client.readHoldingRegisters(req.address, req.quantity)
          : client.readInputRegisters(req.address, req.quantity);
      const res = await untilClosed(this.link!, call, this.name);
      this.timeoutsInRow = 0;
      if (!Array.isArray(res.data) || res.data.length !== req.quantity) {
        throw new ModbusError(
          'decode',
          `asked for ${req.quantity} registers at ${req.address}, got ${res.data?.length ?? 'none'}`,
        );
      }
      return res.data;
    } catch (err) {
      const e = toModbusError(err);
      if (e.kind === 'connection') this.drop();
      if (e.kind === 'timeout' && origin === 'own' && ++this.timeoutsInRow >= DEAD_SOCKET_TIMEOUTS) {
        // a half-open TCP socket never errors by itself; replacing it is the only way to find out
        this.timeoutsInRow = 0;
        this.drop();
      }
      throw e;
    }
  }

  protected shutdown(): Promise<void> {
    this.drop();
    return Promise.resolve();
  }

  private async connected(timeoutMs: number): Promise<ModbusRTU> {
    if (this.client?.isOpen) return this.client;
    this.drop();
    const wait = this.reconnect.check(this.name);
    if (wait) throw wait;
    const client = new ModbusRTU();
    // modbus-serial re-emits socket errors on the client; without a listener they would crash the daemon
    client.on('error', () => undefined);
    try {
      await withTimeout(
        client.connectTCP(this.tcp.host, { port: this.tcp.port }),
        timeoutMs,
        `connecting to ${this.name}`,
      );
    } catch (err) {
      safeClose(client);
      this.reconnect.failed();
      throw new ModbusError('connection', `cannot connect to ${this.name}: ${toModbusError(err).message}`);
    }
    this.reconnect.succeeded();
    this.client = client;
    const link: Link = { closed: false, fail: null };
    client.on('close', () => {
      link.closed = true;
      link.fail?.(closedError(this.name));
    });
    this.link = link;
    return client;
  }

  private drop(): void {
    if (this.client) safeClose(this.client);
    this.client = null;
    this.link = null;
  }
}

interface Link {
  closed: boolean;
  /** fails the request in flight; one at a time (QueuedBus) */
  fail: ((e: ModbusError) => void) | null;
}

const closedError = (name: string) => new ModbusError('connection', `${name} closed the connection`);

/**
 * `call`, or a connection error as soon as the link closes. Not a race against one promise that
 * lives as long as the connection: every race leaves a reaction on that promise, and each held its
 * request's answer until the connection closed, ~1 MB a minute on a healthy ten-device site.
 */
function untilClosed<T>(link: Link, call: Promise<T>, name: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (link.closed) return reject(closedError(name));
    link.fail = reject;
    call.then(resolve, reject).finally(() => (link.fail = null));
  });
}

function safeClose(client: ModbusRTU): void {
  try {
    client.close(() => undefined);
  } catch {
    // already closed
  }
}
