import { ModbusError } from '../../src/modbus/errors.js';

/** The ModbusError a read must end in; fails the test when the read succeeds or throws anything else. */
export async function failure(p: Promise<unknown>): Promise<ModbusError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ModbusError) return err;
    throw err;
  }
  throw new Error('expected the read to fail');
}
