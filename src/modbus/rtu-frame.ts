/**
 * Modbus RTU framing of the two reads the gateway makes (FC3 holding, FC4 input registers):
 * building a request and finding its answer among the bytes received after it was sent.
 * MODBUS over Serial Line V1.02 §2.5.1 (RTU frame: address, PDU, CRC low byte first) and
 * MODBUS Application Protocol V1.1b3 §6.3/§6.4 (read PDUs) and §7 (exception responses).
 *
 * The answer is searched for, not assumed to start at the first byte: noise on an RS-485 line
 * (a floating bus while no driver is enabled, a device switching its driver late) puts stray
 * bytes in front of real frames, and a frame is only accepted when its address, function code,
 * length and CRC all fit the request.
 */
import { crc16, crcOk } from './crc16.js';
import { exceptionError, ModbusError } from './errors.js';

export type RegisterFunction = 'holding' | 'input';

export const FUNCTION_CODE: Record<RegisterFunction, number> = { holding: 0x03, input: 0x04 };

/** A PDU carries at most 125 registers in one read (Application Protocol §6.3). */
export const MAX_REGISTERS = 125;

export interface ReadRequest {
  unitId: number;
  fn: RegisterFunction;
  address: number;
  quantity: number;
}

export function encodeReadRequest(r: ReadRequest): Buffer {
  if (!Number.isInteger(r.unitId) || r.unitId < 0 || r.unitId > 255) throw new RangeError(`unit id ${r.unitId} is not 0..255`);
  if (!Number.isInteger(r.address) || r.address < 0 || r.address > 0xffff) throw new RangeError(`address ${r.address} is not 0..65535`);
  if (!Number.isInteger(r.quantity) || r.quantity < 1 || r.quantity > MAX_REGISTERS || r.address + r.quantity > 0x10000) {
    throw new RangeError(`cannot read ${r.quantity} registers at ${r.address}`);
  }
  const frame = Buffer.alloc(8);
  frame[0] = r.unitId;
  frame[1] = FUNCTION_CODE[r.fn];
  frame.writeUInt16BE(r.address, 2);
  frame.writeUInt16BE(r.quantity, 4);
  frame.writeUInt16LE(crc16(frame, 0, 6), 6);
  return frame;
}

export type ParseResult =
  | { status: 'incomplete' }
  | { status: 'ok'; registers: number[] }
  | { status: 'error'; error: ModbusError };

const EXCEPTION_FRAME = 5;
/** address + function + byte count + 250 data bytes + CRC: the longest RTU frame is 256 bytes */
const MAX_FRAME = 256;

/**
 * The answer to `req` in rx[0, length): `incomplete` while it may still be arriving, `error`
 * when a whole frame for this request arrived but is unusable (bad CRC: `crc`; wrong byte
 * count: `decode`; exception: `exception`).
 */
export function parseReadResponse(rx: Uint8Array, length: number, req: ReadRequest): ParseResult {
  const fc = FUNCTION_CODE[req.fn];
  let waiting = false;
  let corrupt: ModbusError | undefined;
  for (let i = 0; i + EXCEPTION_FRAME <= length; i++) {
    if (rx[i] !== req.unitId) continue;
    const f = rx[i + 1];
    if (f === (fc | 0x80)) {
      if (crcOk(rx, i, i + EXCEPTION_FRAME)) return { status: 'error', error: exceptionError(rx[i + 2]!) };
      corrupt ??= new ModbusError('crc', `exception answer from unit ${req.unitId} failed its CRC check`);
      continue;
    }
    if (f !== fc) continue;
    const end = i + 3 + rx[i + 2]! + 2;
    if (end > i + MAX_FRAME) continue;
    if (end > length) {
      waiting = true;
      continue;
    }
    if (!crcOk(rx, i, end)) {
      corrupt ??= new ModbusError('crc', `answer from unit ${req.unitId} failed its CRC check (${end - i} bytes)`);
      continue;
    }
    const bytes = rx[i + 2]!;
    if (bytes !== 2 * req.quantity) {
      return { status: 'error', error: new ModbusError('decode', `asked unit ${req.unitId} for ${req.quantity} registers at ${req.address}, the answer holds ${bytes} bytes`) };
    }
    const registers = new Array<number>(req.quantity);
    for (let k = 0; k < req.quantity; k++) registers[k] = (rx[i + 3 + 2 * k]! << 8) | rx[i + 4 + 2 * k]!;
    return { status: 'ok', registers };
  }
  if (waiting || !corrupt) return { status: 'incomplete' };
  return { status: 'error', error: corrupt };
}
