/**
 * One simulated host's units served over Modbus RTU on a serial device (modbus-serial
 * ServerSerial), e.g. one end of a socat pty pair whose other end the gateway opens as its
 * RS-485 adapter. Units answer as over TCP (vector.ts), except that a unit id with no device
 * stays silent, as on a real line. Frame faults (garbage, bad CRC, cut-off frames, noise before
 * an answer) are applied here to the bytes of the answer, and `writeRaw` puts arbitrary bytes
 * on the line at any time.
 */

import { performance } from 'node:perf_hooks';
import { ServerSerial } from 'modbus-serial';
import type { Clock } from '../core/clock.js';
import { itemAt } from '../core/item-at.js';
import { crc16 } from '../modbus/crc16.js';
import { interFrameDelayMs, wireTimeMs } from '../modbus/rtu-timing.js';
import type { SimHost } from './device-images.js';
import { type FrameFault, SimFaults } from './faults.js';
import type { SimSite } from './site.js';
import { simVector, siteRefresher } from './vector.js';

export interface SimRtuOptions {
  /** serial device to serve on */
  path: string;
  /** which host's units to serve (their unit ids must be unique on one line); default the meter host */
  host?: SimHost;
  baudRate?: number;
  parity?: 'none' | 'even' | 'odd';
  stopBits?: 1 | 2;
  faults?: SimFaults;
  /**
   * answer when a real line would have carried the request and the answer at baudRate (a pty
   * pair carries bytes at once, so without it a 9600 baud line is as fast as memory): bench/scale.ts
   */
  lineSpeed?: boolean;
  /** every chunk the simulator receives ('in') or sends ('out'), with performance.now() */
  onLine?: (dir: 'in' | 'out', bytes: Buffer, at: number) => void;
}

export interface SimRtuServer {
  path: string;
  host: SimHost;
  faults: SimFaults;
  /** put bytes on the line now (noise) */
  writeRaw(bytes: Uint8Array): void;
  close(): Promise<void>;
}

interface Writable {
  write(data: Buffer): unknown;
}

/** ServerSerial as its JavaScript is (the typings lack the serial-port options argument and getPort) */
interface SerialServer {
  on(event: 'initialized' | 'error' | 'socketError', listener: (err?: Error) => void): unknown;
  once(event: 'initialized', listener: () => void): unknown;
  getPort(): Writable & {
    once(event: 'error', listener: (err: Error) => void): unknown;
    on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  };
  close(cb: () => void): void;
}
type SerialServerCtor = new (
  vector: ReturnType<typeof simVector>,
  options: { path: string; baudRate: number; parity: string; unitID: number; interval: number; portResponse: Writable },
  serialport: { stopBits: number; dataBits: number },
) => SerialServer;
const Server = ServerSerial as unknown as SerialServerCtor;

/** deterministic bytes that never start with `avoid` (so they cannot open a frame of that unit) */
function noise(length: number, avoid: number): Buffer {
  const b = Buffer.alloc(length);
  for (let i = 0; i < length; i++) b[i] = (i * 73 + 0x5a) & 0xff;
  if (b[0] === avoid) b[0] ^= 0xff;
  return b;
}

function spoil(answer: Buffer, fault: FrameFault): Buffer[] {
  switch (fault) {
    case 'garbage':
      return [noise(answer.length, itemAt(answer, 0))];
    case 'bad-crc': {
      const b = Buffer.from(answer);
      const last = b.length - 1;
      b[last] = itemAt(b, last) ^ 0x5a;
      return [b];
    }
    case 'truncated':
      return [answer.subarray(0, Math.max(1, Math.floor(answer.length / 2)))];
    case 'noisy':
      return [noise(3, itemAt(answer, 0)), answer];
    case 'short-count': {
      // an exception answer has no byte count to shorten; it stays as it is
      if (itemAt(answer, 1) & 0x80 || answer.length < 7) return [answer];
      const b = Buffer.from(answer.subarray(0, answer.length - 2));
      b[2] = itemAt(b, 2) - 2;
      const short = b.subarray(0, b.length - 2);
      const framed = Buffer.alloc(short.length + 2);
      short.copy(framed);
      framed.writeUInt16LE(crc16(short), short.length);
      return [framed];
    }
  }
}

export function startSimRtuServer(site: SimSite, clock: Clock, opts: SimRtuOptions): Promise<SimRtuServer> {
  const host = opts.host ?? 'meter';
  const faults = opts.faults ?? new SimFaults();
  const baudRate = opts.baudRate ?? 9600;
  const spoils = new Map<number, FrameFault>();
  let port: Writable | null = null;
  /** bytes received since the last answer: the request the next answer's wire time includes */
  let heard = 0;
  // ServerSerial writes every answer through this; a spoilt one is replaced by its faulty bytes
  const portResponse: Writable = {
    write(answer: Buffer) {
      const unit = answer[0] ?? -1;
      const fault = spoils.get(unit);
      spoils.delete(unit);
      const send = () => {
        for (const chunk of fault ? spoil(answer, fault) : [answer]) {
          opts.onLine?.('out', chunk, performance.now());
          port?.write(chunk);
        }
      };
      if (opts.lineSpeed) setTimeout(send, wireTimeMs(heard + answer.length, baudRate, opts.parity, opts.stopBits));
      else send();
      heard = 0;
      return true;
    },
  };
  const vector = simVector(site, host, siteRefresher(site, clock), {
    transport: 'rtu',
    faults,
    spoilNextAnswer: (unitId, fault) => spoils.set(unitId, fault),
  });
  return new Promise((resolve, reject) => {
    const server = new Server(
      vector,
      {
        path: opts.path,
        baudRate,
        parity: opts.parity ?? 'none',
        unitID: 255,
        // the server ends a request frame after this much silence: the RTU gap at this baud rate
        interval: Math.max(2, Math.ceil(interFrameDelayMs(baudRate, opts.parity, opts.stopBits))),
        portResponse,
      },
      { stopBits: opts.stopBits ?? 1, dataBits: 8 },
    );
    server.on('error', () => undefined);
    server.on('socketError', () => undefined);
    server.once('initialized', () => {
      port = server.getPort();
      server.getPort().on('data', (chunk) => {
        heard += chunk.length;
        opts.onLine?.('in', chunk, performance.now());
      });
      let closing: Promise<void> | undefined;
      resolve({
        path: opts.path,
        host,
        faults,
        writeRaw: (bytes) => port?.write(Buffer.from(bytes)),
        close: () => (closing ??= new Promise<void>((r) => server.close(() => r()))),
      });
    });
    // a missing device makes SerialPort report through the open callback as an error event
    server.getPort().once('error', (err) => reject(err));
  });
}
