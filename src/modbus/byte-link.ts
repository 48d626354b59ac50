/**
 * A byte pipe to an RS-485 line: the serial port itself, or the TCP socket of a transparent
 * serial server. The RTU bus does the framing; a link only moves bytes and says when it broke.
 */
import net from 'node:net';
import { SerialPort } from 'serialport';
import type { RtuConnection } from '../core/connection.js';

export interface ByteLink {
  readonly description: string;
  open(timeoutMs: number): Promise<void>;
  /** resolves once the bytes have left (serial: transmitted, so the answer timeout starts after them) */
  write(bytes: Buffer): Promise<void>;
  /** drop bytes received but not yet delivered (serial: the driver's input queue) */
  discardInput(): Promise<void>;
  close(): Promise<void>;
  onData: ((chunk: Buffer) => void) | null;
  /** the link broke (adapter unplugged, socket reset); it will not deliver data again */
  onClose: ((reason: string) => void) | null;
}

export type SerialSettings = Pick<RtuConnection, 'device' | 'baudRate' | 'parity' | 'dataBits' | 'stopBits'>;

export class SerialLink implements ByteLink {
  onData: ((chunk: Buffer) => void) | null = null;
  onClose: ((reason: string) => void) | null = null;
  private port: SerialPort | null = null;
  /** close() was called; an open that completes afterwards closes the port again */
  private abandoned = false;

  constructor(private readonly s: SerialSettings) {}

  get description(): string {
    return `${this.s.device} at ${this.s.baudRate} baud`;
  }

  open(): Promise<void> {
    const port = new SerialPort({
      path: this.s.device,
      baudRate: this.s.baudRate,
      parity: this.s.parity,
      dataBits: this.s.dataBits,
      stopBits: this.s.stopBits,
      autoOpen: false,
    });
    return new Promise((resolve, reject) => {
      port.open((err) => {
        if (err) {
          reject(err);
          return;
        }
        if (this.abandoned) {
          // the bus gave up waiting: release the port, or its lock would keep every later open out
          port.close(() => undefined);
          reject(new Error('opened after the bus gave up waiting'));
          return;
        }
        this.port = port;
        port.on('data', (chunk: Buffer) => this.onData?.(chunk));
        port.on('error', () => undefined);
        port.on('close', (e?: Error | null) => {
          if (this.port !== port) return; // closed on purpose
          this.port = null;
          this.onClose?.(e?.message ?? 'serial port closed');
        });
        resolve();
      });
    });
  }

  write(bytes: Buffer): Promise<void> {
    const port = this.port;
    if (!port) return Promise.reject(new Error('serial port is not open'));
    return new Promise((resolve, reject) => {
      port.write(bytes, (err) => {
        if (err) reject(err);
        // drain waits for the UART to send the last byte (tcdrain), so the answer timeout starts after it
        else port.drain((e) => (e ? reject(e) : resolve()));
      });
    });
  }

  discardInput(): Promise<void> {
    const port = this.port;
    if (!port) return Promise.resolve();
    // tcflush(TCIOFLUSH): nothing of ours is waiting to go out, the request is written after this
    return new Promise((resolve, reject) => port.flush((err) => (err ? reject(err) : resolve())));
  }

  close(): Promise<void> {
    this.abandoned = true;
    const port = this.port;
    this.port = null;
    if (!port?.isOpen) return Promise.resolve();
    return new Promise((resolve) => port.close(() => resolve()));
  }
}

export class SocketLink implements ByteLink {
  onData: ((chunk: Buffer) => void) | null = null;
  onClose: ((reason: string) => void) | null = null;
  private socket: net.Socket | null = null;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  get description(): string {
    return `${this.host}:${this.port}`;
  }

  open(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: this.host, port: this.port });
      const fail = (err: Error) => {
        clearTimeout(timer);
        socket.destroy();
        reject(err);
      };
      const timer = setTimeout(() => fail(new Error(`no TCP connection within ${timeoutMs} ms`)), timeoutMs);
      socket.once('error', fail);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.off('error', fail);
        socket.setNoDelay(true);
        this.socket = socket;
        socket.on('data', (chunk: Buffer) => this.onData?.(chunk));
        socket.on('error', () => undefined);
        socket.on('close', () => {
          if (this.socket !== socket) return; // closed on purpose
          this.socket = null;
          this.onClose?.('the serial server closed the connection');
        });
        resolve();
      });
    });
  }

  write(bytes: Buffer): Promise<void> {
    const socket = this.socket;
    if (!socket) return Promise.reject(new Error('not connected'));
    return new Promise((resolve, reject) => socket.write(bytes, (err) => (err ? reject(err) : resolve())));
  }

  /** a socket has no input queue to drop: what it received was delivered as data already */
  discardInput(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    const socket = this.socket;
    this.socket = null;
    if (!socket) return Promise.resolve();
    return new Promise((resolve) => {
      socket.once('close', () => resolve());
      socket.destroy();
    });
  }
}
