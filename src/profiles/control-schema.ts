/**
 * The `control:` section of a device profile: how the gateway puts a storage command (the four
 * modes of src/core/storage-control.ts) on the device, as data: per mode the register writes in
 * the order the vendor's document prescribes, and how long a command lives on the device without
 * the gateway. src/profiles/control-compile.ts checks what the schema cannot (one value per write,
 * values that fit their type, a timer write in every command of a revert-timer map);
 * src/profiles/control.ts runs it. docs/device-profiles.md "Control maps (`control:`)".
 */
import type { SchemaNode } from '../yaml/schema.js';
import { DOCUMENT_SOURCE } from './schema-source.js';

/** what a control register may hold: integers and floats of one to two registers */
export const CONTROL_TYPES = ['u16', 's16', 'u32', 's32', 'f32'] as const;
export const CONTROL_MODES = ['self-consumption', 'hold', 'charge', 'discharge'] as const;

const write = {
  type: 'object',
  additionalProperties: false,
  required: ['address', 'type'],
  hint: 'a register write: address, type and one of value, power or lifetime, e.g. { address: 13050, type: u16, value: 2 }',
  properties: {
    address: {
      type: 'integer',
      minimum: 0,
      maximum: 65535,
      hint: 'the register number as the document writes it (hex like 0xE00D is fine)',
    },
    type: {
      type: 'string',
      enum: [...CONTROL_TYPES],
      hint: 'the data type the document gives: u16, s16, u32, s32 or f32',
    },
    value: { type: 'number', hint: 'the raw value the document prescribes for this mode, e.g. 0xAA' },
    power: {
      type: 'object',
      additionalProperties: false,
      hint: 'how the commanded battery power (W, always positive) becomes the raw value: scale, sign, max',
      properties: {
        scale: {
          type: 'number',
          hint: 'raw units per watt: 1 for a register in W, 0.001 for kW, 0.1 for a register counting 10 W',
        },
        sign: { type: 'integer', enum: [1, -1], hint: 'write -1 when the register wants this direction negative' },
        max: {
          type: 'number',
          minimum: 0,
          hint: 'the largest raw value the document allows, e.g. 10000; a larger command is written as this',
        },
      },
    },
    lifetime: {
      type: 'string',
      enum: ['s', 'min'],
      hint: "write the command's life (control.life.seconds) into this register, in seconds (s) or minutes (min)",
    },
    refresh: {
      type: 'boolean',
      hint: 'true when writing this register (re)starts the device timer: it is written on every command, changed or not',
    },
    label: { type: 'string', minLength: 1, maxLength: 120, hint: "the register's name in the document" },
  },
} as const satisfies SchemaNode;

/** one mode's writes; the root schema's $defs hold it once (four copies grew ajv's generated validator) */
export const CONTROL_WRITES = {
  type: 'array',
  minItems: 1,
  maxItems: 16,
  items: write,
  hint: 'list the register writes of this mode in the order the document prescribes',
} as const satisfies SchemaNode;

export const CONTROL_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['source', 'life', 'modes'],
  hint: 'give source (the register document), life and modes (at least self-consumption)',
  properties: {
    source: DOCUMENT_SOURCE,
    unitId: {
      type: 'integer',
      minimum: 0,
      maximum: 255,
      hint: "the unit the control registers answer on when it is not the device's own, e.g. 100",
    },
    power: {
      enum: ['battery', 'grid-setpoint'],
      hint: "what the charge and discharge power is: 'battery' (the default) or 'grid-setpoint' when the document's power is the grid's (Victron's override)",
    },
    life: {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'seconds', 'fallsBack'],
      hint: 'kind (revert-timer or keep-alive), seconds, and fallsBack (does the device return to its own logic by itself)',
      properties: {
        kind: {
          type: 'string',
          enum: ['revert-timer', 'keep-alive'],
          hint: "'revert-timer' when the device ends a command by itself after a time it is given, 'keep-alive' when the gateway must re-assert it",
        },
        seconds: {
          type: 'integer',
          minimum: 10,
          maximum: 3600,
          hint: 'whole seconds, 10 to 3600: how long one command lives (revert-timer) or the re-assert period (keep-alive)',
        },
        fallsBack: {
          type: 'boolean',
          hint: 'true only when the document says the device returns to self-consumption by itself when the gateway goes quiet',
        },
      },
    },
    modes: {
      type: 'object',
      additionalProperties: false,
      required: ['self-consumption'],
      hint: 'per mode (self-consumption, hold, charge, discharge) the list of writes; leave out a mode the document does not give',
      properties: {
        'self-consumption': { $ref: '#/$defs/controlWrites' },
        hold: { $ref: '#/$defs/controlWrites' },
        charge: { $ref: '#/$defs/controlWrites' },
        discharge: { $ref: '#/$defs/controlWrites' },
      },
    },
  },
} as const satisfies SchemaNode;
