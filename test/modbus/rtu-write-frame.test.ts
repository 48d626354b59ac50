/**
 * FC16 framing against MODBUS Application Protocol V1.1b3 §6.12's example (write 0x000A, 0x0102
 * to registers 2 and 3: request 10 00 01 00 02 04 00 0A 01 02, answer 10 00 01 00 02), framed for
 * RTU with unit 0x11 and the CRC of MODBUS over Serial Line V1.02 (low byte first).
 */
import { describe, expect, it } from 'vitest';
import { crc16 } from '../../src/modbus/crc16.js';
import { encodeWriteRequest, parseWriteResponse, type WriteRequest } from '../../src/modbus/rtu-write-frame.js';

const REQ: WriteRequest = { unitId: 0x11, fn: 'write', address: 0x0001, values: [0x000a, 0x0102] };
const withCrc = (bytes: number[]) => {
  const b = Buffer.from([...bytes, 0, 0]);
  b.writeUInt16LE(crc16(b, 0, bytes.length), bytes.length);
  return b;
};
const ANSWER = withCrc([0x11, 0x10, 0x00, 0x01, 0x00, 0x02]);
const parse = (b: Buffer) => parseWriteResponse(b, b.length, REQ);

describe('FC16 over RTU', () => {
  it('encodes the spec example', () => {
    expect(encodeWriteRequest(REQ)).toEqual(
      withCrc([0x11, 0x10, 0x00, 0x01, 0x00, 0x02, 0x04, 0x00, 0x0a, 0x01, 0x02]),
    );
  });
  it('refuses what cannot be written', () => {
    expect(() => encodeWriteRequest({ ...REQ, values: [] })).toThrow(RangeError);
    expect(() => encodeWriteRequest({ ...REQ, values: [0x10000] })).toThrow(RangeError);
    expect(() => encodeWriteRequest({ ...REQ, address: 0xffff })).toThrow(RangeError);
    expect(() => encodeWriteRequest({ ...REQ, values: new Array(124).fill(0) })).toThrow(RangeError);
  });
  it('finds the answer, also behind the echo of its own request and line noise', () => {
    expect(parse(ANSWER)).toEqual({ status: 'ok', registers: [] });
    expect(parse(Buffer.concat([Buffer.from([0xff, 0x00]), encodeWriteRequest(REQ), ANSWER]))).toEqual({
      status: 'ok',
      registers: [],
    });
  });
  it('waits for an answer still arriving, also after the echo alone', () => {
    expect(parse(ANSWER.subarray(0, 5)).status).toBe('incomplete');
    expect(parse(encodeWriteRequest(REQ)).status).toBe('incomplete');
  });
  it('an exception answer is the device refusing the write', () => {
    const r = parse(withCrc([0x11, 0x90, 0x02]));
    expect(r.status).toBe('error');
    expect(r.status === 'error' && r.error.kind).toBe('exception');
  });
  it('an answer confirming other registers is a protocol error, never success', () => {
    const r = parse(withCrc([0x11, 0x10, 0x00, 0x05, 0x00, 0x02]));
    expect(r.status === 'error' && r.error.kind).toBe('protocol');
  });
});
