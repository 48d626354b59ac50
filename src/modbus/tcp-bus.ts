import { ModbusRTU } from './modbus-serial.js';
import { ModbusError, toModbusError } from './errors.js';
import type { RegisterReader } from './register-reader.js';

export interface TcpBusOptions {
  host: string;
  port: number;
  /** per request, real ms: a network timeout does not speed up with the demo clock */
  timeoutMs: number;
  /** first reconnect delay; doubles up to maxBackoffMs */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/** Consecutive timeouts after which the socket is presumed dead and replaced. */
const DEAD_SOCKET_TIMEOUTS = 3;

/**
 * One Modbus TCP connection shared by every unit behind it (a device, or an RTU-over-TCP
 * gateway). Requests are queued and sent one at a time: many cheap gateways and inverters
 * mishandle concurrent transactions, and a queue keeps one slow unit's cost visible.
 */
export class TcpBus implements RegisterReader {
  private client: ModbusRTU | null = null;
  private tail: Promise<unknown> = Promise.resolve();
  private backoffMs = 0;
  private nextConnectAt = 0;
  private timeoutsInRow = 0;
  private closed = false;
  readonly name: string;

  constructor(private readonly opts: TcpBusOptions) {
    this.name = `tcp://${opts.host}:${opts.port}`;
  }

  readHolding(unitId: number, address: number, length: number): Promise<number[]> {
    return this.enqueue(() => this.read('holding', unitId, address, length));
  }

  readInput(unitId: number, address: number, length: number): Promise<number[]> {
    return this.enqueue(() => this.read('input', unitId, address, length));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.tail.catch(() => undefined);
    this.drop();
  }

  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const run = this.tail.then(job, job);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async read(fn: 'holding' | 'input', unitId: number, address: number, length: number): Promise<number[]> {
    const client = await this.connected();
    client.setID(unitId);
    client.setTimeout(this.opts.timeoutMs);
    try {
      const res = fn === 'holding' ? await client.readHoldingRegisters(address, length) : await client.readInputRegisters(address, length);
      this.timeoutsInRow = 0;
      if (!Array.isArray(res.data) || res.data.length !== length) {
        throw new ModbusError('decode', `asked for ${length} registers at ${address}, got ${res.data?.length ?? 'none'}`);
      }
      return res.data;
    } catch (err) {
      const e = toModbusError(err);
      if (e.kind === 'connection') this.drop();
      if (e.kind === 'timeout' && ++this.timeoutsInRow >= DEAD_SOCKET_TIMEOUTS) {
        // a half-open TCP socket never errors by itself; replacing it is the only way to find out
        this.timeoutsInRow = 0;
        this.drop();
      }
      throw e;
    }
  }

  private async connected(): Promise<ModbusRTU> {
    if (this.closed) throw new ModbusError('connection', `${this.name} is closed`);
    if (this.client?.isOpen) return this.client;
    this.drop();
    const now = Date.now();
    if (now < this.nextConnectAt) {
      throw new ModbusError('connection', `not connected to ${this.name}; next attempt in ${this.nextConnectAt - now} ms`);
    }
    const client = new ModbusRTU();
    try {
      await withTimeout(client.connectTCP(this.opts.host, { port: this.opts.port }), this.opts.timeoutMs, this.name);
      this.backoffMs = 0;
      this.client = client;
      return client;
    } catch (err) {
      safeClose(client);
      const min = this.opts.minBackoffMs ?? 250;
      this.backoffMs = Math.min(this.opts.maxBackoffMs ?? 30_000, this.backoffMs ? this.backoffMs * 2 : min);
      this.nextConnectAt = Date.now() + this.backoffMs;
      const e = toModbusError(err);
      throw new ModbusError('connection', `cannot connect to ${this.name}: ${e.message}`);
    }
  }

  private drop(): void {
    if (this.client) safeClose(this.client);
    this.client = null;
  }
}

function safeClose(client: ModbusRTU): void {
  try {
    client.close(() => undefined);
  } catch {
    // already closed
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new ModbusError('timeout', `connecting to ${what} took longer than ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}
