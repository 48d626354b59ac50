/**
 * What a simulated unit serves: holding registers (FC3) and input registers (FC4), each as one
 * or more register banks. A read must fall inside one bank, as on devices that refuse a block
 * straddling an unimplemented range; a unit without banks of a kind refuses that function.
 */
import { MODBUS_EXCEPTION, ModbusException, type RegisterBank } from './bank.js';

export interface SimRegisters {
  holding: readonly RegisterBank[];
  input: readonly RegisterBank[];
}

export type SimFunction = keyof SimRegisters;

export function readRegisters(regs: SimRegisters, fn: SimFunction, address: number, length: number): number[] {
  const banks = regs[fn];
  if (banks.length === 0) {
    throw new ModbusException(MODBUS_EXCEPTION.ILLEGAL_FUNCTION, `this unit serves no ${fn} registers`);
  }
  const bank = banks.find((b) => b.contains(address, length));
  if (!bank) {
    throw new ModbusException(
      MODBUS_EXCEPTION.ILLEGAL_DATA_ADDRESS,
      `${fn} registers ${address}..${address + length - 1} are not implemented`,
    );
  }
  return bank.read(address, length);
}
