/**
 * RTU framing against byte vectors from public documents, not from the encoder's own output:
 *   - MODBUS over Serial Line V1.02 §6.2.2: the CRC of "02 07" is 0x1241, sent as 41 12;
 *   - Eastron SDM630/SDM320 manuals, "Read input register" example: reading total active power,
 *     "Send: 01 04 01 56 00 02 90 27";
 *   - MODBUS Application Protocol V1.1b3 §6.3 example: registers 108..110 read as
 *     "03 06 02 2B 00 00 00 64" (555, 0, 100), framed here for unit 0x11 with the CRC of
 *     modbus-serial (an independent implementation).
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { crc16, crcOk } from '../../src/modbus/crc16.js';
import { encodeReadRequest, parseReadResponse, type ReadRequest, strayFrame } from '../../src/modbus/rtu-frame.js';

const require = createRequire(import.meta.url);
const theirCrc = require('modbus-serial/utils/crc16') as (b: Buffer) => number;

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
/** a frame with modbus-serial's CRC appended, low byte first */
function framed(body: string): Buffer {
  const b = hex(body);
  const crc = theirCrc(b);
  return Buffer.concat([b, Buffer.from([crc & 0xff, crc >> 8])]);
}

const SPEC_EXAMPLE: ReadRequest = { unitId: 0x11, fn: 'holding', address: 107, quantity: 3 };
const SPEC_ANSWER = framed('11 03 06 02 2B 00 00 00 64');

describe('CRC-16/Modbus', () => {
  it('matches the serial line specification example and modbus-serial', () => {
    expect(crc16(hex('02 07'))).toBe(0x1241);
    for (const body of ['01 03 00 00 00 0A', '11 03 06 02 2B 00 00 00 64', 'FF FF FF', '00']) {
      expect(crc16(hex(body))).toBe(theirCrc(hex(body)));
    }
    expect(crcOk(SPEC_ANSWER, 0, SPEC_ANSWER.length)).toBe(true);
    const spoilt = Buffer.from(SPEC_ANSWER);
    spoilt.writeUInt8(spoilt.readUInt8(4) ^ 0x01, 4);
    expect(crcOk(spoilt, 0, spoilt.length)).toBe(false);
  });
});

describe('read requests', () => {
  it("encode the Eastron manual's input register request byte for byte", () => {
    expect(encodeReadRequest({ unitId: 1, fn: 'input', address: 0x0156, quantity: 2 })).toEqual(
      hex('01 04 01 56 00 02 90 27'),
    );
  });

  it('refuse what no device could answer', () => {
    expect(() => encodeReadRequest({ unitId: 1, fn: 'holding', address: 0, quantity: 126 })).toThrow(RangeError);
    expect(() => encodeReadRequest({ unitId: 1, fn: 'holding', address: 0xffff, quantity: 2 })).toThrow(RangeError);
    expect(() => encodeReadRequest({ unitId: 256, fn: 'holding', address: 0, quantity: 1 })).toThrow(RangeError);
  });
});

describe('finding the answer among received bytes', () => {
  const parse = (bytes: Buffer, req = SPEC_EXAMPLE) => parseReadResponse(bytes, bytes.length, req);

  it('decodes the application protocol example', () => {
    expect(parse(SPEC_ANSWER)).toEqual({ status: 'ok', registers: [555, 0, 100] });
  });

  it('waits while the frame is still arriving', () => {
    for (let n = 0; n < SPEC_ANSWER.length; n++) expect(parse(SPEC_ANSWER.subarray(0, n)).status).toBe('incomplete');
  });

  it('skips noise in front of the frame, and an echo of the request', () => {
    expect(parse(Buffer.concat([hex('00 FF 11 A5'), SPEC_ANSWER]))).toEqual({ status: 'ok', registers: [555, 0, 100] });
    expect(parse(Buffer.concat([encodeReadRequest(SPEC_EXAMPLE), SPEC_ANSWER]))).toEqual({
      status: 'ok',
      registers: [555, 0, 100],
    });
  });

  it('a whole frame with a bad CRC is a crc error', () => {
    const spoilt = Buffer.from(SPEC_ANSWER);
    spoilt.writeUInt8(spoilt.readUInt8(spoilt.length - 1) ^ 0xff, spoilt.length - 1);
    const r = parse(spoilt);
    expect(r.status === 'error' && r.error.kind).toBe('crc');
  });

  it('an exception answer is an exception with its code', () => {
    const r = parse(framed('11 83 02'));
    expect(r.status).toBe('error');
    if (r.status === 'error') {
      expect(r.error.kind).toBe('exception');
      expect(r.error.exceptionCode).toBe(2);
    }
  });

  it('an echo of the request alone is not an answer, nor a garbled one', () => {
    expect(parse(encodeReadRequest(SPEC_EXAMPLE)).status).toBe('incomplete');
  });
});

describe('an answer that does not fit its request (RTU has no transaction id)', () => {
  const parse = (bytes: Buffer, req = SPEC_EXAMPLE) => parseReadResponse(bytes, bytes.length, req);
  const error = (bytes: Buffer, req = SPEC_EXAMPLE) => {
    const r = parse(bytes, req);
    if (r.status !== 'error') throw new Error(`expected an error, got ${JSON.stringify(r)}`);
    return r.error;
  };

  it('another byte count than 2 × quantity is a protocol error, not registers', () => {
    // the example's answer holds 3 registers: asked for 2 or 4 of them it is an earlier request's answer
    for (const quantity of [2, 4]) {
      expect(error(SPEC_ANSWER, { ...SPEC_EXAMPLE, quantity })).toMatchObject({
        kind: 'protocol',
        message: `asked unit 17 for ${quantity} registers at 107, the answer holds 6 bytes`,
      });
    }
    expect(error(framed('11 03 04 02 2B 00 00'))).toMatchObject({ kind: 'protocol' });
  });

  it('another function code, or the exception form of another one, is a protocol error', () => {
    expect(error(SPEC_ANSWER, { ...SPEC_EXAMPLE, fn: 'input' })).toMatchObject({
      kind: 'protocol',
      message: 'asked unit 17 for input registers (function 4), the answer is function 3',
    });
    expect(error(framed('11 84 02'))).toMatchObject({
      kind: 'protocol',
      message: expect.stringContaining('function 4 (exception)'),
    });
    // a write's echo (FC6) from the asked unit
    expect(error(framed('11 06 00 6B 00 01'))).toMatchObject({ kind: 'protocol' });
  });

  it("only the asked function's exception form is an exception", () => {
    expect(error(framed('11 83 02'))).toMatchObject({ kind: 'exception', exceptionCode: 2 });
  });

  it("another unit's frame is never the answer: passed over, and named by strayFrame", () => {
    const other = framed('12 03 06 02 2B 00 00 00 64');
    expect(parse(other).status).toBe('incomplete');
    expect(strayFrame(other, other.length, 0x11)).toEqual({ unitId: 0x12, fn: 3 });
    // the asked unit's own answer after it is taken
    expect(parse(Buffer.concat([other, SPEC_ANSWER]))).toEqual({ status: 'ok', registers: [555, 0, 100] });
  });

  it("strayFrame finds no frame in noise, a cut-off frame or the asked unit's own frames", () => {
    const noise = hex('00 FF 12 03 A5 5A 01 02');
    expect(strayFrame(noise, noise.length, 0x11)).toBeUndefined();
    const cut = framed('12 03 06 02 2B 00 00 00 64').subarray(0, 9);
    expect(strayFrame(cut, cut.length, 0x11)).toBeUndefined();
    expect(strayFrame(SPEC_ANSWER, SPEC_ANSWER.length, 0x11)).toBeUndefined();
  });
});
