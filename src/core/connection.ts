/**
 * How a device is reached: the contract between site.yaml (src/config/schema-connection.ts validates it and
 * checks at compile time that what it yields is exactly this) and the transports in src/modbus.
 */
export interface TcpConnection {
  type: 'tcp';
  host: string;
  port: number;
  unitId: number;
  /** per-request timeout, ms */
  timeoutMs: number;
}

/** Modbus RTU on a serial port (an RS-485 adapter); every device of one port shares its line settings. */
export interface RtuConnection {
  type: 'rtu';
  /** serial device path, e.g. /dev/ttyUSB0 */
  device: string;
  baudRate: number;
  parity: 'none' | 'even' | 'odd';
  dataBits: 8;
  stopBits: 1 | 2;
  /** 1..247 */
  unitId: number;
  timeoutMs: number;
  /** silence between frames, ms; absent = 3.5 character times at baudRate (src/modbus/rtu-timing.ts) */
  interFrameDelayMs?: number;
}

/** Modbus RTU frames (with CRC, no MBAP header) through a transparent serial server's TCP port. */
export interface RtuOverTcpConnection {
  type: 'rtu-over-tcp';
  host: string;
  port: number;
  /** 1..247 */
  unitId: number;
  timeoutMs: number;
}

export type DeviceConnection = TcpConnection | RtuConnection | RtuOverTcpConnection;

/** The wire a device is on (serial device path, or TCP host and port), without its unit. */
export function linkOf(c: DeviceConnection): string {
  return c.type === 'rtu' ? c.device : `${c.host.toLowerCase()}:${c.port}`;
}
