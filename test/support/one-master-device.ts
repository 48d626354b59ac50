/**
 * A device for the Modbus proxy tests that, like a SolarEdge inverter on Modbus TCP or any unit on
 * an RS-485 line, takes one master only: over TCP a second connection while one is open is closed
 * at once (and counted), over RTU there is one line. Written here from the byte layouts of the
 * MODBUS Application Protocol V1.1b3 (FC3, FC4, FC6, FC16, exceptions) and the Messaging on TCP/IP
 * Implementation Guide V1.0b (MBAP) and Serial Line V1.02 (RTU CRC), not with the gateway's or the
 * simulator's code. Its registers: the Sungrow SH10RT golden image (test/fixtures/devices/
 * sungrow-sh10rt-v112.yaml, input registers; unlisted ones inside its range read 0) and the
 * holding registers of test/fixtures/control/sungrow-sh-rt.yaml plus 13057 'Max. SoC' (document
 * register 13058, U16, 0.1 %, 50.0..100.0, read-write: Sungrow "Communication Protocol of
 * Residential Hybrid Inverter" V1.0.20; mkaiser/Sungrow-SHx-Inverter-Modbus-Home-Assistant
 * modbus_sungrow.yaml writes it at address 13057), which is not one of control's registers.
 */

import net from 'node:net';
import { join } from 'node:path';
import { loadControlFixture } from './control-device.js';
import { encode, FIXTURE_DIR, loadFixture } from './register-image.js';

export const UNIT = 1;
/** 13058 Max. SoC as the wire addresses it, factory 100.0 % */
export const MAX_SOC = { address: 13057, factory: 1000 };

export interface SeenRequest {
  fn: number;
  address: number;
  count: number;
}

export interface Registers {
  input: Map<number, number>;
  holding: Map<number, number>;
  /** input registers [lo, hi) that exist (unlisted ones read 0) */
  inputRange: [number, number];
}

export function sungrowRegisters(): Registers {
  const f = loadFixture(join(FIXTURE_DIR, 'sungrow-sh10rt-v112.yaml'));
  const input = new Map<number, number>();
  for (const r of f.image.registers)
    encode(f.name, r, f.image.wordOrder).forEach((w, i) => input.set(r.address + i, w));
  const holding = new Map<number, number>();
  for (const r of loadControlFixture('sungrow-sh-rt').registers)
    r.words.forEach((w, i) => holding.set(r.address + i, w));
  holding.set(MAX_SOC.address, MAX_SOC.factory);
  const addrs = [...input.keys()];
  return { input, holding, inputRange: [Math.min(...addrs), Math.max(...addrs) + 1] };
}

/** The answer PDU to a request PDU for `unit`; null: not this device's unit (it stays silent, as on a line). */
export function answerPdu(regs: Registers, seen: SeenRequest[], unit: number, pdu: Buffer): Buffer | null {
  if (unit !== UNIT) return null;
  const fn = pdu[0]!;
  const fail = (code: number) => Buffer.from([fn | 0x80, code]);
  const w = (i: number) => pdu.readUInt16BE(i);
  if (fn === 3 || fn === 4) {
    const address = w(1);
    const count = w(3);
    seen.push({ fn, address, count });
    const words: number[] = [];
    for (let a = address; a < address + count; a++) {
      const v =
        fn === 3
          ? regs.holding.get(a)
          : (regs.input.get(a) ?? (a >= regs.inputRange[0] && a < regs.inputRange[1] ? 0 : undefined));
      if (v === undefined) return fail(2);
      words.push(v);
    }
    const out = Buffer.alloc(2 + 2 * count);
    out[0] = fn;
    out[1] = 2 * count;
    words.forEach((v, i) => out.writeUInt16BE(v, 2 + 2 * i));
    return out;
  }
  if (fn === 6 || fn === 16) {
    const address = w(1);
    const values = fn === 6 ? [w(3)] : Array.from({ length: w(3) }, (_, i) => w(6 + 2 * i));
    seen.push({ fn, address, count: values.length });
    if (values.some((_, i) => !regs.holding.has(address + i))) return fail(2);
    values.forEach((v, i) => regs.holding.set(address + i, v));
    return fn === 6 ? Buffer.from(pdu) : Buffer.from(pdu.subarray(0, 5));
  }
  return fail(1);
}

export interface OneConnectionDevice {
  port: number;
  regs: Registers;
  /** every request the device answered, in order */
  seen: SeenRequest[];
  /** connections it accepted, and those it closed at once because one was open */
  accepted: number;
  refused: number;
  close(): Promise<void>;
}

/** The device over Modbus TCP on 127.0.0.1, one connection at a time. */
export async function startOneConnectionDevice(): Promise<OneConnectionDevice> {
  const regs = sungrowRegisters();
  const seen: SeenRequest[] = [];
  let open: net.Socket | null = null;
  const sockets = new Set<net.Socket>();
  const dev = {
    port: 0,
    regs,
    seen,
    accepted: 0,
    refused: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (open) {
      dev.refused++;
      socket.destroy();
      return;
    }
    dev.accepted++;
    open = socket;
    socket.on('close', () => {
      if (open === socket) open = null;
    });
    let buf = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 7 && buf.length >= 6 + buf.readUInt16BE(4)) {
        const len = buf.readUInt16BE(4);
        const pdu = answerPdu(regs, seen, buf[6]!, buf.subarray(7, 6 + len));
        if (pdu) {
          const head = Buffer.alloc(7);
          buf.copy(head, 0, 0, 4);
          head.writeUInt16BE(pdu.length + 1, 4);
          head[6] = buf[6]!;
          socket.write(Buffer.concat([head, pdu]));
        }
        buf = buf.subarray(6 + len);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  dev.port = (server.address() as net.AddressInfo).port;
  return dev;
}

/** CRC-16/MODBUS (Serial Line V1.02 §6.2.2: polynomial 0xA001 reflected, init 0xFFFF), low byte first on the wire */
function crc(bytes: Buffer): number {
  let c = 0xffff;
  for (const b of bytes) {
    c ^= b;
    for (let i = 0; i < 8; i++) c = c & 1 ? (c >>> 1) ^ 0xa001 : c >>> 1;
  }
  return c;
}

/** the length of the request frame at the start of `b` (unit, PDU, CRC), or 0 while it cannot be known */
function requestLength(b: Buffer): number {
  if (b.length < 2) return 0;
  const fn = b[1]!;
  if (fn === 16) return b.length < 7 ? 0 : 9 + b[6]!;
  return 8;
}

export interface LineDevice {
  regs: Registers;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** The device as a unit on an RS-485 line: the serial port at `path` (a socat pty end). */
export async function startLineDevice(path: string): Promise<LineDevice> {
  const { SerialPort } = await import('serialport');
  const regs = sungrowRegisters();
  const seen: SeenRequest[] = [];
  const port = new SerialPort({ path, baudRate: 19200, parity: 'even', dataBits: 8, stopBits: 1, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((e) => (e ? reject(e) : resolve())));
  let buf = Buffer.alloc(0);
  port.on('data', (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      const n = requestLength(buf);
      if (n === 0 || buf.length < n) return;
      const frame = buf.subarray(0, n);
      if (crc(frame.subarray(0, n - 2)) !== frame.readUInt16LE(n - 2)) {
        // not a frame of ours from here: drop a byte and look again, as a unit finds the next silence
        buf = buf.subarray(1);
        continue;
      }
      buf = buf.subarray(n);
      const pdu = answerPdu(regs, seen, frame[0]!, frame.subarray(1, n - 2));
      if (!pdu) continue;
      const out = Buffer.concat([Buffer.from([frame[0]!]), pdu, Buffer.alloc(2)]);
      out.writeUInt16LE(crc(out.subarray(0, out.length - 2)), out.length - 2);
      port.write(out);
    }
  });
  return {
    regs,
    seen,
    close: () => new Promise<void>((resolve) => (port.isOpen ? port.close(() => resolve()) : resolve())),
  };
}
