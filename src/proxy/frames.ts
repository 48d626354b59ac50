/**
 * Modbus TCP as the proxy speaks it to its clients: MBAP framing (MODBUS Messaging on TCP/IP
 * Implementation Guide V1.0b §3.1.3: transaction id, protocol id 0, length of unit id and PDU)
 * and the request PDUs it serves (MODBUS Application Protocol V1.1b3 §6.3 FC3, §6.4 FC4, §6.6 FC6,
 * §6.12 FC16; §7 exception answers). Everything else is answered with exception 01 or 03 here,
 * without touching the bus; bytes that are not MBAP at all cannot be resynchronised and end the
 * connection (ProxyGarbage).
 */

export const MBAP_HEADER = 7;
/** §4.1 of the Application Protocol: an ADU is at most 260 bytes, so the length field at most 254 */
const MAX_LENGTH = 254;

export const EXCEPTION = {
  ILLEGAL_FUNCTION: 1,
  ILLEGAL_DATA_ADDRESS: 2,
  ILLEGAL_DATA_VALUE: 3,
  GATEWAY_PATH_UNAVAILABLE: 0x0a,
  GATEWAY_TARGET_FAILED: 0x0b,
} as const;

export interface Frame {
  transactionId: number;
  unitId: number;
  pdu: Buffer;
}

export type ProxyRequest =
  | { kind: 'read'; fn: 3 | 4; address: number; quantity: number }
  | { kind: 'write'; fn: 6 | 16; address: number; values: number[] }
  | { kind: 'refuse'; fn: number; exception: number; why: string };

/** Bytes that are not Modbus TCP: the connection cannot be trusted to find the next frame. */
export class ProxyGarbage extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProxyGarbage';
  }
}

/**
 * The whole frames at the start of `buf`, and how many bytes they took; a frame cut off at the
 * end waits for more bytes. Throws ProxyGarbage on a header no Modbus TCP client sends.
 */
export function splitFrames(buf: Buffer): { frames: Frame[]; used: number } {
  const frames: Frame[] = [];
  let at = 0;
  while (buf.length - at >= MBAP_HEADER) {
    const protocol = buf.readUInt16BE(at + 2);
    const length = buf.readUInt16BE(at + 4);
    if (protocol !== 0) throw new ProxyGarbage(`protocol id ${protocol}, not 0 (Modbus)`);
    if (length < 2 || length > MAX_LENGTH) throw new ProxyGarbage(`MBAP length ${length} outside 2..${MAX_LENGTH}`);
    if (buf.length - at < 6 + length) break;
    frames.push({
      transactionId: buf.readUInt16BE(at),
      unitId: buf[at + 6]!,
      pdu: Buffer.from(buf.subarray(at + MBAP_HEADER, at + 6 + length)),
    });
    at += 6 + length;
  }
  return { frames, used: at };
}

const refuse = (fn: number, exception: number, why: string): ProxyRequest => ({ kind: 'refuse', fn, exception, why });

/** What a request PDU asks for; a request this proxy does not carry is a refusal with its exception code. */
export function parseRequest(pdu: Buffer): ProxyRequest {
  const fn = pdu[0]!;
  const word = (i: number) => pdu.readUInt16BE(i);
  switch (fn) {
    case 3:
    case 4: {
      if (pdu.length !== 5) return refuse(fn, EXCEPTION.ILLEGAL_DATA_VALUE, `FC${fn} of ${pdu.length} bytes`);
      const address = word(1);
      const quantity = word(3);
      if (quantity < 1 || quantity > 125)
        return refuse(fn, EXCEPTION.ILLEGAL_DATA_VALUE, `quantity ${quantity} outside 1..125`);
      if (address + quantity > 0x10000) return refuse(fn, EXCEPTION.ILLEGAL_DATA_ADDRESS, `registers past 65535`);
      return { kind: 'read', fn, address, quantity };
    }
    case 6:
      if (pdu.length !== 5) return refuse(fn, EXCEPTION.ILLEGAL_DATA_VALUE, `FC6 of ${pdu.length} bytes`);
      return { kind: 'write', fn, address: word(1), values: [word(3)] };
    case 16: {
      if (pdu.length < 6) return refuse(fn, EXCEPTION.ILLEGAL_DATA_VALUE, `FC16 of ${pdu.length} bytes`);
      const address = word(1);
      const quantity = word(3);
      const bytes = pdu[5]!;
      if (quantity < 1 || quantity > 123 || bytes !== 2 * quantity || pdu.length !== 6 + bytes)
        return refuse(fn, EXCEPTION.ILLEGAL_DATA_VALUE, `FC16 of ${quantity} registers in ${bytes} bytes`);
      if (address + quantity > 0x10000) return refuse(fn, EXCEPTION.ILLEGAL_DATA_ADDRESS, `registers past 65535`);
      return { kind: 'write', fn, address, values: Array.from({ length: quantity }, (_, i) => word(6 + 2 * i)) };
    }
    default:
      return refuse(fn, EXCEPTION.ILLEGAL_FUNCTION, `function ${fn} is not carried (FC3, FC4, FC6 and FC16 are)`);
  }
}

function adu(f: Pick<Frame, 'transactionId' | 'unitId'>, pdu: Buffer): Buffer {
  const out = Buffer.alloc(MBAP_HEADER + pdu.length);
  out.writeUInt16BE(f.transactionId, 0);
  out.writeUInt16BE(0, 2);
  out.writeUInt16BE(pdu.length + 1, 4);
  out[6] = f.unitId;
  pdu.copy(out, MBAP_HEADER);
  return out;
}

export function readAnswer(f: Frame, fn: 3 | 4, registers: readonly number[]): Buffer {
  const pdu = Buffer.alloc(2 + 2 * registers.length);
  pdu[0] = fn;
  pdu[1] = 2 * registers.length;
  registers.forEach((r, i) => pdu.writeUInt16BE(r, 2 + 2 * i));
  return adu(f, pdu);
}

/** FC6 echoes the request; FC16 answers address and quantity. */
export function writeAnswer(f: Frame, req: Extract<ProxyRequest, { kind: 'write' }>): Buffer {
  if (req.fn === 6) return adu(f, f.pdu);
  const pdu = Buffer.alloc(5);
  pdu[0] = 16;
  pdu.writeUInt16BE(req.address, 1);
  pdu.writeUInt16BE(req.values.length, 3);
  return adu(f, pdu);
}

export function exceptionAnswer(f: Frame, fn: number, code: number): Buffer {
  return adu(f, Buffer.from([(fn | 0x80) & 0xff, code]));
}
