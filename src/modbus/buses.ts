import type { DeviceConnection } from '../core/connection.js';
import type { RegisterReader } from '../core/register-reader.js';
import type { RegisterWriter } from '../core/storage-control.js';
import { SerialLink, SocketLink } from './byte-link.js';
import { linkKey } from './link.js';
import type { QueuedBus } from './queued-bus.js';
import { RtuBus } from './rtu-bus.js';
import { interFrameDelayMs } from './rtu-timing.js';
import { TcpBus } from './tcp-bus.js';
import type { UnitBackoffOptions } from './unit-backoff.js';

/** A bus the registry owns: it reads registers and can be closed on shutdown. */
export type Bus = QueuedBus;

export interface BusRegistryOptions {
  backoff?: UnitBackoffOptions;
}

/** A new bus for the link a connection uses (its line settings come from the first device on it). */
export function createBus(c: DeviceConnection, opts: BusRegistryOptions = {}): Bus {
  const name = linkKey(c);
  switch (c.type) {
    case 'tcp':
      return new TcpBus({ host: c.host, port: c.port, timeoutMs: c.timeoutMs, backoff: opts.backoff });
    case 'rtu-over-tcp':
      // the serial server's baud rate is not ours to know; its TCP side needs no gap beyond the RTU minimum
      return new RtuBus({
        name,
        link: () => new SocketLink(c.host, c.port),
        timeoutMs: c.timeoutMs,
        interFrameDelayMs: 1.75,
        backoff: opts.backoff,
      });
    case 'rtu':
      return new RtuBus({
        name,
        link: () => new SerialLink(c),
        timeoutMs: c.timeoutMs,
        interFrameDelayMs: c.interFrameDelayMs ?? interFrameDelayMs(c.baudRate, c.parity, c.stopBits),
        backoff: opts.backoff,
      });
  }
}

/**
 * One bus per physical link (a serial port, a TCP endpoint): devices that share a link share its
 * request queue, devices on different links never wait for each other. Each device reads with
 * its own timeout.
 */
export class BusRegistry {
  private readonly buses = new Map<string, Bus>();

  constructor(private readonly opts: BusRegistryOptions = {}) {}

  busFor(device: { connection: DeviceConnection }): Bus {
    const key = linkKey(device.connection);
    let bus = this.buses.get(key);
    if (!bus) {
      bus = createBus(device.connection, this.opts);
      this.buses.set(key, bus);
    }
    return bus;
  }

  readerFor(device: { connection: DeviceConnection }): RegisterReader & RegisterWriter {
    return this.busFor(device).reader(device.connection.timeoutMs);
  }

  all(): Bus[] {
    return [...this.buses.values()];
  }

  async close(): Promise<void> {
    await Promise.all(this.all().map((b) => b.close()));
    this.buses.clear();
  }
}
