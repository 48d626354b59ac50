import type { RegisterReader } from '../core/register-reader.js';
import { exceptionError, ModbusError } from '../modbus/errors.js';
import { ModbusException } from '../sim/bank.js';
import { readRegisters, type SimFunction } from '../sim/registers.js';
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

  async readInput(unitId: number, address: number, length: number): Promise<number[]> {
    return this.read('input', unitId, address, length);
  }

  async readHolding(unitId: number, address: number, length: number): Promise<number[]> {
    return this.read('holding', unitId, address, length);
  }

  private read(fn: SimFunction, unitId: number, address: number, length: number): number[] {
    const regs = this.sim.unit(this.host, unitId);
    if (!regs) throw new ModbusError('timeout', `no unit ${unitId} on the simulated ${this.host} host`);
    try {
      return readRegisters(regs, fn, address, length);
    } catch (err) {
      if (err instanceof ModbusException) throw exceptionError(err.modbusErrorCode);
      throw err;
    }
  }
}
