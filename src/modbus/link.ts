import type { DeviceConnection } from '../core/connection.js';

/**
 * The physical link a connection uses: devices with the same key share one wire (a serial port,
 * or one TCP endpoint) and so one request queue. The key is also how logs and `sitegw scan` name
 * the link.
 */
export function linkKey(c: DeviceConnection): string {
  switch (c.type) {
    case 'tcp':
      return `tcp://${c.host.toLowerCase()}:${c.port}`;
    case 'rtu-over-tcp':
      return `rtu-over-tcp://${c.host.toLowerCase()}:${c.port}`;
    case 'rtu':
      return `rtu:${c.device}`;
  }
}

/** One line for an installer: where the device is and how it is addressed. */
export function describeConnection(c: DeviceConnection): string {
  switch (c.type) {
    case 'tcp':
    case 'rtu-over-tcp':
      return `${c.type} ${c.host}:${c.port} unit ${c.unitId}`;
    case 'rtu':
      return `rtu ${c.device} ${c.baudRate} ${c.dataBits}${c.parity[0]!.toUpperCase()}${c.stopBits} unit ${c.unitId}`;
  }
}
