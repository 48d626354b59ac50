/**
 * Modbus RTU framing of the write the gateway makes, FC16 (Write Multiple Registers), and finding
 * its answer: MODBUS Application Protocol V1.1b3 §6.12 (request: address, quantity 1..123, byte
 * count, values; normal answer: address and quantity echoed) and §7 (exception 0x90), framed as
 * MODBUS over Serial Line V1.02 §2.5.1 (CRC low byte first). A single register goes as FC16 too:
 * every device that takes FC6 takes FC16 of one register, and one frame shape keeps the parser small.
 */
import { crc16, crcOk } from './crc16.js';
import { exceptionError, ModbusError } from './errors.js';
import type { ParseResult } from './rtu-frame.js';

/** Application Protocol §6.12: at most 123 registers in one FC16 request. */
export const MAX_WRITE_REGISTERS = 123;
export const FC_WRITE_MULTIPLE = 0x10;

export interface WriteRequest {
  unitId: number;
  fn: 'write';
  address: number;
  values: readonly number[];
}

export function checkWrite(r: Omit<WriteRequest, 'fn'>): void {
  if (!Number.isInteger(r.unitId) || r.unitId < 0 || r.unitId > 247)
    throw new RangeError(`unit id ${r.unitId} is not 0..247`);
  const n = r.values.length;
  if (n < 1 || n > MAX_WRITE_REGISTERS || !Number.isInteger(r.address) || r.address < 0 || r.address + n > 0x10000)
    throw new RangeError(`cannot write ${n} registers at ${r.address}`);
  for (const v of r.values)
    if (!Number.isInteger(v) || v < 0 || v > 0xffff) throw new RangeError(`register value ${v} is not 0..65535`);
}

export function encodeWriteRequest(r: WriteRequest): Buffer {
  checkWrite(r);
  const n = r.values.length;
  const frame = Buffer.alloc(9 + 2 * n);
  frame[0] = r.unitId;
  frame[1] = FC_WRITE_MULTIPLE;
  frame.writeUInt16BE(r.address, 2);
  frame.writeUInt16BE(n, 4);
  frame[6] = 2 * n;
  r.values.forEach((v, i) => frame.writeUInt16BE(v, 7 + 2 * i));
  frame.writeUInt16LE(crc16(frame, 0, 7 + 2 * n), 7 + 2 * n);
  return frame;
}

const ANSWER = 8;
const EXCEPTION = 5;

/**
 * The answer to `req` in rx[0, length). An adapter without echo suppression hands back our own
 * request first; its bytes are passed over whole, never read as a broken answer.
 */
export function parseWriteResponse(rx: Uint8Array, length: number, req: WriteRequest): ParseResult {
  const echo = encodeWriteRequest(req);
  for (let i = 0; i + EXCEPTION <= length; i++) {
    if (rx[i] !== req.unitId) continue;
    if (i + echo.length <= length && Buffer.from(rx.subarray(i, i + echo.length)).equals(echo)) {
      i += echo.length - 1;
      continue;
    }
    const f = rx[i + 1]!;
    if (f === (FC_WRITE_MULTIPLE | 0x80)) {
      if (!crcOk(rx, i, i + EXCEPTION)) continue;
      return { status: 'error', error: exceptionError(rx[i + 2]!) };
    }
    if (f !== FC_WRITE_MULTIPLE) continue;
    if (i + ANSWER > length) continue;
    if (!crcOk(rx, i, i + ANSWER)) continue;
    const word = (k: number) => (rx[i + k]! << 8) | rx[i + k + 1]!;
    if (word(2) !== req.address || word(4) !== req.values.length)
      return {
        status: 'error',
        error: new ModbusError(
          'protocol',
          `wrote ${req.values.length} registers at ${req.address} to unit ${req.unitId}, the answer confirms ${word(4)} at ${word(2)}`,
        ),
      };
    return { status: 'ok', registers: [] };
  }
  return { status: 'incomplete' };
}
