/**
 * The proxy's Modbus TCP framing against byte strings written here from MODBUS Messaging on
 * TCP/IP Implementation Guide V1.0b §3.1.3 (MBAP) and the examples of MODBUS Application Protocol
 * V1.1b3 §6.3 (FC3: read 3 registers at 107 → 03 00 6B 00 03), §6.12 (FC16: 2 registers at 1 →
 * 10 00 01 00 02 04 00 0A 01 02) and §7 (exception: function + 0x80, code).
 */
import { describe, expect, it } from 'vitest';
import {
  exceptionAnswer,
  ProxyGarbage,
  parseRequest,
  readAnswer,
  splitFrames,
  writeAnswer,
} from '../../src/proxy/frames.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('Modbus TCP framing of the proxy', () => {
  it('splits pipelined frames and keeps a cut-off one for later', () => {
    const two = hex('0001 0000 0006 01 03006B0003  0002 0000 0006 01 0400000001  0003 0000 0006 01 04');
    const { frames, used } = splitFrames(two);
    expect(frames.map((f) => [f.transactionId, f.unitId, f.pdu.toString('hex')])).toEqual([
      [1, 1, '03006b0003'],
      [2, 1, '0400000001'],
    ]);
    expect(used).toBe(24);
  });

  it('bytes that are not MBAP end the connection: a protocol id other than 0, a length outside 2..254', () => {
    expect(() => splitFrames(Buffer.from('GET / HTTP/1.1\r\n'))).toThrow(ProxyGarbage);
    expect(() => splitFrames(hex('0001 0000 0001 01'))).toThrow(/length 1/);
    expect(() => splitFrames(hex('0001 0000 00FF 01'))).toThrow(/length 255/);
  });

  it('reads the requests the Application Protocol gives as examples', () => {
    expect(parseRequest(hex('03006B0003'))).toEqual({ kind: 'read', fn: 3, address: 107, quantity: 3 });
    expect(parseRequest(hex('0600010003'))).toEqual({ kind: 'write', fn: 6, address: 1, values: [3] });
    expect(parseRequest(hex('100001000204000A0102'))).toEqual({
      kind: 'write',
      fn: 16,
      address: 1,
      values: [10, 258],
    });
  });

  it('refuses what it does not carry with the exception the Application Protocol names', () => {
    expect(parseRequest(hex('0100000008'))).toMatchObject({ kind: 'refuse', exception: 1 });
    expect(parseRequest(hex('2B0E0100'))).toMatchObject({ kind: 'refuse', exception: 1 });
    expect(parseRequest(hex('030000007E'))).toMatchObject({ kind: 'refuse', exception: 3 });
    expect(parseRequest(hex('0400000000'))).toMatchObject({ kind: 'refuse', exception: 3 });
    expect(parseRequest(hex('03FFFF0002'))).toMatchObject({ kind: 'refuse', exception: 2 });
    expect(parseRequest(hex('100001000203000A01'))).toMatchObject({ kind: 'refuse', exception: 3 });
    expect(parseRequest(hex('0300'))).toMatchObject({ kind: 'refuse', exception: 3 });
  });

  it('answers with the request transaction and unit', () => {
    const f = { transactionId: 0x1234, unitId: 7, pdu: hex('03006B0003') };
    expect(readAnswer(f, 3, [0x022b, 0, 0x64]).toString('hex')).toBe('12340000000907' + '0306022b00000064');
    expect(exceptionAnswer(f, 3, 1).toString('hex')).toBe('123400000003078301');
    const w = { transactionId: 1, unitId: 1, pdu: hex('100001000204000A0102') };
    expect(writeAnswer(w, { kind: 'write', fn: 16, address: 1, values: [10, 258] }).toString('hex')).toBe(
      '000100000006011000010002',
    );
    const six = { transactionId: 2, unitId: 1, pdu: hex('0600010003') };
    expect(writeAnswer(six, { kind: 'write', fn: 6, address: 1, values: [3] }).toString('hex')).toBe(
      '0002000000060106' + '00010003',
    );
  });
});
