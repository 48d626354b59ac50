/**
 * The `limit:` section of a device profile: how the gateway puts an active power limit
 * (src/core/active-power-limit.ts) on the device, as data: the setpoint register (W or percent of
 * the rating), the enable and commit registers the document names, what the device does with the
 * limit once the gateway is gone, and where it keeps a fallback. Two kinds of limit: `output` (the
 * inverter's own AC output, which sitegw's loop holds at the grid meter) and `device-export-limit`
 * (the device's own export limiter with its own meter, which sitegw may set instead of looping).
 * src/profiles/limit-compile.ts checks what the schema cannot; src/profiles/limit.ts runs it.
 * docs/device-profiles.md "Limit maps (`limit:`)", docs/limits-vendors.md.
 */
import type { SchemaNode } from '../yaml/schema.js';
import { CONTROL_TYPES } from './control-schema.js';
import { DOCUMENT_SOURCE } from './schema-source.js';

export const LIMIT_MODES = ['output', 'device-export-limit'] as const;
export const LIMIT_REVERTS = ['revert-values', 'revert-unlimited', 'keep-alive', 'none', 'unknown'] as const;

const address = {
  type: 'integer',
  minimum: 0,
  maximum: 65535,
  hint: 'the register number as the document writes it (hex like 0xF001 is fine)',
} as const satisfies SchemaNode;
const type = {
  type: 'string',
  enum: [...CONTROL_TYPES],
  hint: 'the data type the document gives: u16, s16, u32, s32 or f32',
} as const satisfies SchemaNode;
const label = {
  type: 'string',
  minLength: 1,
  maxLength: 120,
  hint: "the register's name in the document",
} as const satisfies SchemaNode;
const unit = {
  type: 'string',
  enum: ['W', 'percent'],
  hint: "'W' when the register holds watts (times scale), 'percent' when it holds percent of the rating (times scale)",
} as const satisfies SchemaNode;
const scale = {
  type: 'number',
  hint: 'raw units per W or per percent: 1 for W, 0.01 for a register counting 100 W, 10 for 0.1 %',
} as const satisfies SchemaNode;

const setpoint = {
  type: 'object',
  additionalProperties: false,
  required: ['address', 'type', 'unit'],
  hint: 'the register the limit is written to: address, type, unit (W or percent), scale',
  properties: {
    address,
    type,
    unit,
    scale,
    max: { type: 'number', hint: 'the largest raw value the document allows; a larger limit is written as this' },
    none: {
      type: 'number',
      hint: 'the raw value the document gives for "no limit" (e.g. -1); without it, no limit is 100 % or the rating',
    },
    readBack: {
      type: 'integer',
      minimum: 0,
      maximum: 65535,
      hint: 'the holding register the document reads the value back at, when it is not the one written',
    },
    label,
  },
} as const satisfies SchemaNode;

const switchRegister = {
  type: 'object',
  additionalProperties: false,
  required: ['address', 'type', 'on'],
  hint: 'the register that switches the limit on: address, type, on and (where the document gives it) off',
  properties: {
    address,
    type,
    on: { type: 'number', hint: 'the raw value that enables the limit, e.g. 0xAA' },
    off: { type: 'number', hint: 'the raw value that disables it (no limit), e.g. 0x55; leave out to keep it enabled' },
    mask: {
      type: 'integer',
      minimum: 1,
      maximum: 65535,
      hint: 'for a u16 of flags: the bits this switch owns, e.g. 1; the other bits are kept as the device has them',
    },
    label,
  },
} as const satisfies SchemaNode;

const fixedWrites = {
  type: 'array',
  minItems: 1,
  maxItems: 4,
  hint: 'registers the document says to set before a limit: each { address, type, value }',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['address', 'type', 'value'],
    hint: 'a register and the raw value it must hold while the limit is on, e.g. { address: 0xE001, type: u16, value: 0 }',
    properties: { address, type, value: { type: 'number', hint: 'the raw value' }, label },
  },
} as const satisfies SchemaNode;

const commit = {
  type: 'object',
  additionalProperties: false,
  required: ['address', 'type', 'value'],
  hint: 'a register the document says to write after a change so the device takes it: address, type, value',
  properties: { address, type, value: { type: 'number', hint: 'the raw value, e.g. 1' }, label },
} as const satisfies SchemaNode;

const timeout = {
  type: 'object',
  additionalProperties: false,
  required: ['address', 'type', 'unit'],
  hint: "the register the device's revert time is written to: address, type, unit (s or min)",
  properties: {
    address,
    type,
    unit: { type: 'string', enum: ['s', 'min'], hint: 's for seconds, min for minutes' },
    label,
  },
} as const satisfies SchemaNode;

const fallback = {
  type: 'object',
  additionalProperties: false,
  required: ['address', 'type', 'unit'],
  hint: 'the register the device falls back to when the gateway is gone: address, type, unit, scale',
  properties: { address, type, unit, scale, label },
} as const satisfies SchemaNode;

/** one limit (output or device-export-limit); the root schema's $defs hold it once */
export const LIMIT_MAP = {
  type: 'object',
  additionalProperties: false,
  required: ['setpoint', 'revert'],
  hint: 'give setpoint and revert, and before, enable, commit, timeout, fallback where the document has them',
  properties: {
    before: fixedWrites,
    setpoint,
    enable: switchRegister,
    commit,
    timeout,
    fallback,
    revert: {
      type: 'object',
      additionalProperties: false,
      required: ['kind'],
      hint: 'kind (what the device does once the gateway is gone), seconds, and the source that says so',
      properties: {
        kind: {
          type: 'string',
          enum: [...LIMIT_REVERTS],
          hint: "'none' (it keeps the limit), 'revert-unlimited', 'revert-values' (falls to the fallback), 'keep-alive' (drops it unless rewritten), or 'unknown' when no source says",
        },
        seconds: {
          type: 'integer',
          minimum: 1,
          maximum: 7200,
          hint: 'whole seconds: the revert time, the keep-alive period, or for unknown how often the gateway re-asserts',
        },
        says: {
          type: 'string',
          minLength: 1,
          hint: 'where the document says it (section, register), or why it is unknown',
        },
      },
    },
  },
} as const satisfies SchemaNode;

export const LIMIT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['source'],
  hint: 'give source (the register document) and output and/or device-export-limit',
  properties: {
    source: DOCUMENT_SOURCE,
    unitId: {
      type: 'integer',
      minimum: 0,
      maximum: 255,
      hint: "the unit the limit registers answer on when it is not the device's own, e.g. 100",
    },
    rating: {
      type: 'object',
      additionalProperties: false,
      required: ['address', 'type'],
      hint: "the register holding the device's rated AC output: address, type, function, scale (to W)",
      properties: {
        address,
        type,
        function: { type: 'string', enum: ['holding', 'input'], hint: "'holding' (FC3, the default) or 'input' (FC4)" },
        scale: { type: 'number', hint: 'W per raw unit: 1 for W, 100 for a register counting 0.1 kW' },
        label,
      },
    },
    output: { $ref: '#/$defs/limitMap' },
    'device-export-limit': { $ref: '#/$defs/limitMap' },
  },
} as const satisfies SchemaNode;
