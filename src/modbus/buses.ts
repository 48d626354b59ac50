import type { DeviceConfig } from '../config/types.js';
import type { RegisterReader } from './register-reader.js';
import { TcpBus } from './tcp-bus.js';

/** A bus the registry owns: it reads registers and can be closed on shutdown. */
export interface Bus extends RegisterReader {
  readonly name: string;
  close(): Promise<void>;
}

/**
 * One bus per physical link (a TCP endpoint, a serial port): devices that share a link share its
 * request queue, devices on different links never wait for each other.
 */
export class BusRegistry {
  private readonly buses = new Map<string, Bus>();

  readerFor(device: DeviceConfig): RegisterReader {
    const c = device.connection;
    const key = `tcp://${c.host}:${c.port}`;
    let bus = this.buses.get(key);
    if (!bus) {
      bus = new TcpBus({ host: c.host, port: c.port, timeoutMs: c.timeoutMs });
      this.buses.set(key, bus);
    }
    return bus;
  }

  all(): Bus[] {
    return [...this.buses.values()];
  }

  async close(): Promise<void> {
    await Promise.all(this.all().map((b) => b.close()));
    this.buses.clear();
  }
}
