/**
 * site.yaml `modbusProxy:`: local Modbus TCP ports through which the site's other tools (Home
 * Assistant's Modbus integration, evcc, a logger) reach a device sitegw already polls, on sitegw's
 * own connection and behind its polls (docs/modbus-proxy.md).
 */
import type { SchemaNode } from '../yaml/schema.js';

export const MODBUS_PROXY = {
  type: 'array',
  description:
    "Modbus TCP ports that share a device with other tools, on sitegw's connection to it and behind its polls (docs/modbus-proxy.md)",
  default: [],
  maxItems: 16,
  hint: "list one entry per shared device, e.g. '- { port: 1502, target: inverter }'",
  items: {
    type: 'object',
    hint: 'give at least port and target',
    additionalProperties: false,
    required: ['port', 'target'],
    properties: {
      port: {
        type: 'integer',
        description: 'the local Modbus TCP port the other tools connect to',
        minimum: 1,
        maximum: 65535,
        hint: 'use a free TCP port, e.g. 1502 (502 needs root)',
      },
      target: {
        type: 'string',
        description: 'id of the device whose bus and unit the port shares',
        minLength: 1,
        hint: 'name the id of a device of this file',
      },
      writes: {
        type: 'string',
        description:
          "'deny': every write is answered with Modbus exception 01 and logged; 'allow': writes reach the device, except to the registers battery control commands while control is enabled",
        default: 'deny',
        enum: ['deny', 'allow'],
        hint: "use 'deny' (read only) or 'allow'",
      },
      host: {
        type: 'string',
        description: 'bind address of the port; 0.0.0.0 for tools on other machines of the LAN',
        default: '127.0.0.1',
        minLength: 1,
        hint: 'use 127.0.0.1 for tools on this box only or 0.0.0.0 for the whole LAN',
      },
    },
  },
} as const satisfies SchemaNode;
