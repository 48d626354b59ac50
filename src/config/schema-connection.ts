/** site.yaml: how a device is reached (`devices[].connection`), one branch per transport. */
import { narrow, type SchemaNode } from '../yaml/schema.js';

const CONNECTION_TYPES = ['tcp', 'rtu', 'rtu-over-tcp'];

const host = (what: string) =>
  ({
    type: 'string',
    description: `IP address or host name of the ${what}`,
    minLength: 1,
    hint: `give the IP address or host name of the ${what}, e.g. 192.168.1.50`,
  }) as const satisfies SchemaNode;

const timeoutMs = {
  type: 'integer',
  description: 'how long to wait for one answer, milliseconds',
  default: 1000,
  minimum: 50,
  maximum: 60000,
  hint: 'use milliseconds between 50 and 60000, usually 1000',
} as const satisfies SchemaNode;

/** On a serial line 0 is the broadcast address (no device answers it) and 248..255 are reserved. */
const serialUnitId = {
  type: 'integer',
  description: 'Modbus address of the device on the RS-485 line, 1..247',
  default: 1,
  minimum: 1,
  maximum: 247,
  hint: 'use the Modbus address set on the device (its display or DIP switches), 1 to 247',
} as const satisfies SchemaNode;

const typeOf = <V extends string>(value: V, description: string) =>
  ({
    type: 'string',
    description,
    enum: [value],
    hint: `write one of: ${CONNECTION_TYPES.join(', ')}`,
  }) as const satisfies SchemaNode;

/**
 * How a device is reached. The `type` picks the branch, so a mistake in an RTU connection is
 * reported against the RTU keys only (ajv's discriminator, not a plain oneOf).
 */
export const CONNECTION = {
  type: 'object',
  description: 'how to reach the device',
  hint: "give type: tcp and the device's host, or type: rtu and its serial device",
  discriminator: { propertyName: 'type' },
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'host'],
      properties: {
        type: typeOf(
          'tcp',
          "transport: 'tcp' Modbus TCP, 'rtu' Modbus RTU on a serial port, 'rtu-over-tcp' RTU frames through a serial server",
        ),
        host: host('device'),
        port: {
          type: 'integer',
          description: 'Modbus TCP port',
          default: 502,
          minimum: 1,
          maximum: 65535,
          hint: "use the device's Modbus TCP port, usually 502",
        },
        unitId: {
          type: 'integer',
          description:
            'Modbus unit id, 0..247; 0 is allowed because over TCP it addresses the server itself ' +
            '(it is only a broadcast on serial lines) and some devices answer only to 0',
          default: 1,
          minimum: 0,
          maximum: 247,
          hint: 'use the unit id set on the device, 0 to 247, usually 1',
        },
        timeoutMs,
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'device'],
      properties: {
        type: typeOf('rtu', 'Modbus RTU on a serial port (RS-485 adapter)'),
        device: {
          type: 'string',
          description: 'serial device of the RS-485 adapter; /dev/serial/by-id/... survives re-plugging',
          minLength: 1,
          pattern: '^/',
          hint: 'give the path of the serial device, e.g. /dev/ttyUSB0 or /dev/serial/by-id/usb-FTDI_...',
        },
        baudRate: {
          type: 'integer',
          description: 'line speed, as set on every device of the line',
          default: 9600,
          minimum: 1200,
          maximum: 115200,
          hint: 'use the baud rate set on the device, usually 9600 or 19200',
        },
        parity: {
          type: 'string',
          description: 'parity bit, as set on every device of the line',
          default: 'none',
          enum: ['none', 'even', 'odd'],
          hint: "use the device's setting: none, even or odd (Modbus recommends even)",
        },
        dataBits: narrow<8>()({
          type: 'integer',
          description: 'data bits per character; Modbus RTU always uses 8 (7 is Modbus ASCII)',
          default: 8,
          minimum: 8,
          maximum: 8,
          hint: 'write 8: Modbus RTU uses 8 data bits',
        }),
        stopBits: narrow<1 | 2>()({
          type: 'integer',
          description: 'stop bits, as set on every device of the line',
          default: 1,
          minimum: 1,
          maximum: 2,
          hint: 'use 1 or 2, as set on the device (2 is usual when parity is none)',
        }),
        unitId: serialUnitId,
        timeoutMs,
        interFrameDelayMs: {
          type: 'number',
          description:
            'silence kept between two frames, ms; default 3.5 character times at the baud rate (1.75 ms above 19200 baud)',
          minimum: 0,
          maximum: 1000,
          hint: 'leave it out for the Modbus default, or give milliseconds between 0 and 1000 for a slow device',
        },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'host', 'port'],
      properties: {
        type: typeOf('rtu-over-tcp', 'Modbus RTU frames through a transparent RS-485-to-Ethernet serial server'),
        host: host('serial server'),
        port: {
          type: 'integer',
          description: 'TCP port of the serial server (no common default: e.g. 8899, 4196 or 502)',
          minimum: 1,
          maximum: 65535,
          hint: "use the TCP port the serial server's web page shows for its RS-485 port",
        },
        unitId: serialUnitId,
        timeoutMs,
      },
    },
  ],
} as const satisfies SchemaNode;
