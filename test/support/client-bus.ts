/**
 * RegisterReader & RegisterWriter over one modbus-serial TCP client, for tests of the control
 * engine against fixture devices. The daemon's own buses gain FC16 with src/control/; this is the
 * test's plain client, one request at a time.
 */
import type { RegisterReader } from '../../src/core/register-reader.js';
import type { RegisterWriter } from '../../src/core/storage-control.js';
import { ModbusRTU } from '../../src/modbus/modbus-serial.js';

export interface ClientBus extends RegisterReader, RegisterWriter {
  close(): Promise<void>;
}

export async function connectClientBus(host: string, port: number): Promise<ClientBus> {
  const client = new ModbusRTU();
  client.on('error', () => undefined);
  await client.connectTCP(host, { port });
  client.setTimeout(2000);
  let queue: Promise<unknown> = Promise.resolve();
  const one = <T>(unitId: number, call: () => Promise<T>): Promise<T> => {
    const next = queue.then(() => {
      client.setID(unitId);
      return call();
    });
    queue = next.catch(() => undefined);
    return next;
  };
  return {
    readHolding: (unitId, address, length) =>
      one(unitId, () => client.readHoldingRegisters(address, length)).then((r) => r.data),
    readInput: (unitId, address, length) =>
      one(unitId, () => client.readInputRegisters(address, length)).then((r) => r.data),
    writeHolding: (unitId, address, values) =>
      one(unitId, () => client.writeRegisters(address, values)).then(() => undefined),
    close: () => new Promise<void>((resolve) => client.close(() => resolve())),
  };
}
