import { ModbusError } from '../modbus/errors.js';
import type { RegisterReader } from '../modbus/register-reader.js';
import { ModbusException } from '../sim/bank.js';
import type { SimHost, SimSite } from '../sim/site.js';

/**
 * Reads the simulator's register images without a socket, answering as the Modbus servers do
 * (exception for an address outside the image, silence for a unit that does not exist). History
 * pre-fill polls through it so past buckets take the same discovery, decoding and bucketing path
 * as live ones.
 */
export class SimMemoryReader implements RegisterReader {
  constructor(
    private readonly sim: SimSite,
    private readonly host: SimHost,
  ) {}

  async readInput(_unitId: number, _address: number, _length: number): Promise<number[]> {
    // the simulated SunSpec devices serve holding registers only, as the Modbus servers do
    throw new ModbusError('exception', 'exception 1 (illegal function)', 1);
  }

  async readHolding(unitId: number, address: number, length: number): Promise<number[]> {
    const bank = this.sim.unit(this.host, unitId);
    if (!bank) throw new ModbusError('timeout', `no unit ${unitId} on the simulated ${this.host} host`);
    try {
      return bank.read(address, length);
    } catch (err) {
      if (err instanceof ModbusException) throw new ModbusError('exception', err.message, err.modbusErrorCode);
      throw err;
    }
  }
}
