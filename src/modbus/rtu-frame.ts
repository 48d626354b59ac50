/**
 * Modbus RTU framing of the two reads the gateway makes (FC3 holding, FC4 input registers):
 * building a request and finding its answer among the bytes received after it was sent.
 * MODBUS over Serial Line V1.02 §2.5.1 (RTU frame: address, PDU, CRC low byte first) and
 * MODBUS Application Protocol V1.1b3 §6.3/§6.4 (read PDUs) and §7 (exception responses).
 *
 * The answer is searched for, not assumed to start at the first byte: noise on an RS-485 line
 * (a floating bus while no driver is enabled, a device switching its driver late) puts stray
 * bytes in front of real frames, and a frame is only accepted when its address, function code,
 * length and CRC all fit the request. RTU has no transaction id, so a whole frame (good CRC) from
 * the asked unit that does not fit — another function, another byte count than 2 × quantity — is
 * a `protocol` error, never data: most likely the answer to an earlier request that came late.
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
  if (!Number.isInteger(r.unitId) || r.unitId < 0 || r.unitId > 255)
    throw new RangeError(`unit id ${r.unitId} is not 0..255`);
  if (!Number.isInteger(r.address) || r.address < 0 || r.address > 0xffff)
    throw new RangeError(`address ${r.address} is not 0..65535`);
  if (
    !Number.isInteger(r.quantity) ||
    r.quantity < 1 ||
    r.quantity > MAX_REGISTERS ||
    r.address + r.quantity > 0x10000
  ) {
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
/** a request frame, and the echo of ours that an adapter without echo suppression hands back */
const REQUEST_FRAME = 8;
/** address + function + byte count + 250 data bytes + CRC: the longest RTU frame is 256 bytes */
const MAX_FRAME = 256;

/**
 * Length of the answer frame starting at rx[i], by its function code (Application Protocol §6):
 * an exception is 5 bytes, a read (FC1..4) 5 + its byte count, a write (FC5, 6, 15, 16) echoes 8
 * bytes; undefined for any other function (not a frame this master can meet).
 */
function answerLength(rx: Uint8Array, i: number): number | undefined {
  const f = rx[i + 1]!;
  if (f & 0x80) return EXCEPTION_FRAME;
  if (f >= 1 && f <= 4) return 5 + rx[i + 2]!;
  if (f === 5 || f === 6 || f === 15 || f === 16) return REQUEST_FRAME;
  return undefined;
}

function isEcho(rx: Uint8Array, i: number, length: number, req: ReadRequest): boolean {
  if (i + REQUEST_FRAME > length || rx[i + 1] !== FUNCTION_CODE[req.fn]) return false;
  const word = (k: number) => (rx[i + k]! << 8) | rx[i + k + 1]!;
  return word(2) === req.address && word(4) === req.quantity && crcOk(rx, i, i + REQUEST_FRAME);
}

/**
 * The answer to `req` in rx[0, length): `incomplete` while it may still be arriving, `error`
 * when a whole frame from the asked unit arrived but is unusable (bad CRC: `crc`; exception:
 * `exception`; another function or byte count: `protocol`). Frames of other units are passed over
 * (strayFrame names them when the answer never comes).
 */
export function parseReadResponse(rx: Uint8Array, length: number, req: ReadRequest): ParseResult {
  const fc = FUNCTION_CODE[req.fn];
  let waiting = false;
  let corrupt: ModbusError | undefined;
  for (let i = 0; i + EXCEPTION_FRAME <= length; i++) {
    if (rx[i] !== req.unitId) continue;
    if (isEcho(rx, i, length, req)) {
      i += REQUEST_FRAME - 1;
      continue;
    }
    const f = rx[i + 1]!;
    const size = answerLength(rx, i);
    if (size === undefined || size > MAX_FRAME) continue;
    if (i + size > length) {
      waiting = true;
      continue;
    }
    if (!crcOk(rx, i, i + size)) {
      if (f === fc)
        corrupt ??= new ModbusError('crc', `answer from unit ${req.unitId} failed its CRC check (${size} bytes)`);
      else if (f === (fc | 0x80))
        corrupt ??= new ModbusError('crc', `exception answer from unit ${req.unitId} failed its CRC check`);
      continue;
    }
    if (f === (fc | 0x80)) return { status: 'error', error: exceptionError(rx[i + 2]!) };
    if (f !== fc) {
      return {
        status: 'error',
        error: new ModbusError(
          'protocol',
          `asked unit ${req.unitId} for ${req.fn} registers (function ${fc}), the answer is function ${f & 0x7f}${f & 0x80 ? ' (exception)' : ''}`,
        ),
      };
    }
    const bytes = rx[i + 2]!;
    if (bytes !== 2 * req.quantity) {
      return {
        status: 'error',
        error: new ModbusError(
          'protocol',
          `asked unit ${req.unitId} for ${req.quantity} registers at ${req.address}, the answer holds ${bytes} bytes`,
        ),
      };
    }
    const registers = new Array<number>(req.quantity);
    for (let k = 0; k < req.quantity; k++) registers[k] = (rx[i + 3 + 2 * k]! << 8) | rx[i + 4 + 2 * k]!;
    return { status: 'ok', registers };
  }
  if (waiting || !corrupt) return { status: 'incomplete' };
  return { status: 'error', error: corrupt };
}

/** The first whole frame (good CRC) in rx[0, length) from a unit other than `unitId`, if any. */
export function strayFrame(rx: Uint8Array, length: number, unitId: number): { unitId: number; fn: number } | undefined {
  for (let i = 0; i + EXCEPTION_FRAME <= length; i++) {
    if (rx[i] === unitId) continue;
    const size = answerLength(rx, i);
    if (size !== undefined && size <= MAX_FRAME && i + size <= length && crcOk(rx, i, i + size))
      return { unitId: rx[i]!, fn: rx[i + 1]! };
  }
  return undefined;
}
