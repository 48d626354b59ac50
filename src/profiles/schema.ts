/**
 * JSON Schema (for ajv) of a device profile, device-profiles/<name>.yaml. As in site.yaml's
 * schema, `hint` is what an error suggests, so advice sits next to its rule. Rules that span
 * several values (address or sum, the file name, channel units of a role) are in compile.ts.
 */
import { DEVICE_STATUSES, GRID_STATES } from '../core/channels.js';
import { NUMERIC_TYPES } from '../modbus/codec.js';
import { narrow, type SchemaNode } from '../yaml/schema.js';
import { CONTROL_SCHEMA, CONTROL_WRITES } from './control-schema.js';
import { LIMIT_MAP, LIMIT_SCHEMA } from './limit-schema.js';
import { DOCUMENT_SOURCE } from './schema-source.js';

export const PROFILE_NAME_PATTERN = '^[a-z0-9_-]+$';
export const REGISTER_TYPES = [...NUMERIC_TYPES, 'string'] as const;
/** per register type, its not-available values; one entry per type (typed here, built from the list below) */
type SentinelDefaults = { readonly [T in (typeof REGISTER_TYPES)[number]]: typeof registerFields.sentinels };

const address = {
  type: 'integer',
  minimum: 0,
  maximum: 65535,
  hint: 'the register number as the document writes it, 0 to 65535 (hex like 0x0034 is fine)',
} as const satisfies SchemaNode;

const sentinel = {
  type: ['integer', 'string'],
  pattern: '^(0x[0-9a-fA-F]+|-?[0-9]+)$',
  hint: "a raw register value such as 0xFFFF; quote 64-bit values, e.g. '0xFFFFFFFFFFFFFFFF'",
} as const satisfies SchemaNode;

/** Fields every register reference may carry. */
const registerFields = {
  address,
  sum: {
    type: 'array',
    minItems: 2,
    maxItems: 16,
    items: address,
    hint: 'list the addresses to add up, e.g. [817, 818, 819] for three phases',
  },
  function: {
    type: 'string',
    enum: ['holding', 'input'],
    hint: "'holding' (function code 3) or 'input' (function code 4)",
  },
  type: {
    type: 'string',
    enum: [...REGISTER_TYPES],
    hint: 'the data type the document gives: u16, s16, u32, s32, u64, s64, f32, acc32 or string',
  },
  length: { type: 'integer', minimum: 1, maximum: 125, hint: 'registers the text occupies (two characters each)' },
  wordOrder: {
    type: 'string',
    enum: ['big', 'little'],
    hint: "'big' when the high word comes first (usual), 'little' when the low word does",
  },
  byteOrder: {
    type: 'string',
    enum: ['big', 'little'],
    hint: "'big' (usual) or 'little' when the two bytes of each register are swapped",
  },
  sentinels: {
    type: 'array',
    minItems: 1,
    items: sentinel,
    hint: 'list the raw values meaning "not available", e.g. [0xFFFF]',
  },
  label: { type: 'string', minLength: 1, maxLength: 120, hint: "the register's name in the document" },
  optional: { type: 'boolean', hint: 'true when some firmware versions lack the register' },
  pollIntervalSeconds: {
    type: 'integer',
    minimum: 1,
    maximum: 86400,
    hint: 'whole seconds, e.g. 600 for a slow value such as SoH',
  },
} as const satisfies Readonly<Record<string, SchemaNode>>;

type Fields = Readonly<Record<string, SchemaNode>>;

function register<const E extends Fields, const R extends readonly string[]>(hint: string, extra: E, required: R) {
  const properties = { ...registerFields, ...extra };
  return { type: 'object', additionalProperties: false, required, properties, hint } as const;
}

const plainRegister = register('give at least address and type', {}, ['type']);

const sourceFields = <const U extends readonly string[]>(units: U) =>
  ({
    unit: { type: 'string', enum: units, hint: `the unit the register counts in after scaling: ${units.join(' or ')}` },
    scale: { type: 'number', hint: 'the factor to multiply the raw value by; a "gain" of 10 is scale 0.1' },
    scaleFactor: { $ref: '#/$defs/scaleFactor' },
    offset: {
      type: 'number',
      hint: 'added after scaling, in the unit given, e.g. -100 for a temperature sent as °C + 100 (not for counters)',
    },
    sign: {
      type: 'integer',
      enum: [1, -1],
      hint: 'write -1 when the device counts the other way round than docs/design.md "power sign" says',
    },
    absolute: { type: 'boolean', hint: 'true to take the magnitude of a value whose sign the device gets wrong' },
    signFrom: { $ref: '#/$defs/signFrom' },
    minus: {
      type: 'array',
      minItems: 1,
      maxItems: 16,
      items: address,
      hint: 'addresses subtracted from the value, e.g. [30867] for a power given as import and export magnitudes',
    },
  }) as const satisfies Fields;

/** A register that feeds a channel, and the one it falls back to (which has no fallback of its own). */
function source<const U extends readonly string[]>(units: U, what: string) {
  const hint = `describe the register that gives ${what}: address, type and unit`;
  const otherwise = register(hint, sourceFields(units), ['type', 'unit']);
  return register(hint, { otherwise, ...sourceFields(units) }, ['type', 'unit']);
}

/** A channel source with whichever units: the node its type (profile-types.ts SourceSpec) is read off. */
export type SourceNode = ReturnType<typeof source<readonly string[]>>;

const POWER = ['W', 'kW'] as const;
const ENERGY = ['Wh', 'kWh', 'MWh'] as const;
const PERCENT = ['%'] as const;
const HERTZ = ['Hz'] as const;
const VOLTS = ['V'] as const;
const AMPERES = ['A'] as const;
const CELSIUS = ['°C'] as const;

/**
 * The live channels a role section may map (core/roles.ts `live`; docs/design.md "Live channels"):
 * instantaneous values shown in the live view, never bucketed.
 */
const acLive = {
  frequency_Hz: source(HERTZ, 'the AC frequency'),
  voltage_L1_V: source(VOLTS, 'the voltage of phase L1 to neutral'),
  voltage_L2_V: source(VOLTS, 'the voltage of phase L2 to neutral'),
  voltage_L3_V: source(VOLTS, 'the voltage of phase L3 to neutral'),
  current_L1_A: source(AMPERES, 'the current of phase L1 (a magnitude)'),
  current_L2_A: source(AMPERES, 'the current of phase L2 (a magnitude)'),
  current_L3_A: source(AMPERES, 'the current of phase L3 (a magnitude)'),
  power_L1_W: source(POWER, 'the power of phase L1, with the sign of power_W'),
  power_L2_W: source(POWER, 'the power of phase L2, with the sign of power_W'),
  power_L3_W: source(POWER, 'the power of phase L3, with the sign of power_W'),
};
const dcLive = {
  voltage_DC_V: source(VOLTS, 'the DC voltage'),
  current_DC_A: source(AMPERES, 'the DC current (a magnitude)'),
};
const temperature = { temperature_C: source(CELSIUS, 'the temperature (inverter heat sink or cabinet, battery)') };

/**
 * The device's operating status: one register whose raw code is looked up in a table written
 * state → codes, so the states are the closed set the live views carry (core/channels.ts
 * DEVICE_STATUSES) and a code the table lacks reads `unknown (code N)`.
 */
const statusCodes = (s: string) =>
  ({
    type: 'array',
    minItems: 1,
    items: { type: 'integer', minimum: 0, hint: 'a raw register value, e.g. 0x0040' },
    hint: `list the raw codes that mean ${s}, e.g. [0x0040]`,
  }) as const satisfies SchemaNode;
const status = register(
  'the status register: address, type and states (each state with the raw codes that mean it)',
  {
    states: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      hint: `map states (${DEVICE_STATUSES.join(', ')}) to the raw codes that mean them, e.g. running: [0x0040, 0x0400]`,
      properties: Object.fromEntries(DEVICE_STATUSES.map((s) => [s, statusCodes(s)])) as {
        [S in (typeof DEVICE_STATUSES)[number]]: ReturnType<typeof statusCodes>;
      },
    },
  },
  ['type', 'states'],
);

/** One PV string (MPPT input): its voltage and current, and its power where the device gives it. */
const pvString = {
  type: 'object',
  additionalProperties: false,
  required: ['voltage_DC_V', 'current_DC_A'],
  hint: 'give voltage_DC_V and current_DC_A of the string (power_W where the device has it)',
  properties: {
    voltage_DC_V: source(VOLTS, 'the string voltage'),
    current_DC_A: source(AMPERES, 'the string current (a magnitude)'),
    power_W: source(POWER, 'the string power, with the sign of pv power_W'),
  },
} as const satisfies SchemaNode;

const state = {
  type: 'string',
  enum: GRID_STATES,
  hint: "one of 'ok', 'not_present' or 'unknown'",
} as const satisfies SchemaNode;

export const STATE_SPEC = {
  type: 'object',
  additionalProperties: false,
  required: ['rules', 'otherwise'],
  hint: 'give rules (checked in order) and the state when none matches (otherwise)',
  properties: {
    rules: {
      type: 'array',
      minItems: 1,
      hint: 'list rules, each with registers, one condition (in, anyBits or below) and a state',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['registers', 'state'],
        hint: 'a rule has registers, one condition (in, anyBits or below) and a state',
        properties: {
          registers: {
            type: 'array',
            minItems: 1,
            maxItems: 16,
            items: plainRegister,
            hint: 'list the registers the rule reads',
          },
          in: {
            type: 'array',
            minItems: 1,
            items: { type: 'integer', hint: 'a raw value' },
            hint: 'list the raw values that mean this state',
          },
          anyBits: {
            type: 'integer',
            minimum: 1,
            maximum: 0xffffffff,
            hint: 'the bit mask that means this state, e.g. 0x0001',
          },
          below: {
            type: 'number',
            hint: 'the value (after scale) under which every register must be, e.g. 50 for volts',
          },
          scale: { type: 'number', hint: 'factor applied before comparing with below' },
          state,
        },
      },
    },
    otherwise: state,
  },
} as const satisfies SchemaNode;

function role<const C extends Fields>(channels: C, hint: string) {
  return { type: 'object', additionalProperties: false, properties: channels, hint } as const;
}

const counters = {
  inWh: source(ENERGY, 'the lifetime energy into the device (imported, charged, absorbed)'),
  outWh: source(ENERGY, 'the lifetime energy out of the device (exported, discharged, delivered)'),
};

/** One identification rule: a register and the values a device of the kind answers with. */
const MATCH_RULE = register(
  'a register and the values (in, range or pattern) it must hold',
  {
    in: { type: 'array', minItems: 1, items: { type: 'integer' }, hint: 'list the raw values it may hold' },
    range: narrow<[number, number]>()({
      type: 'array',
      minItems: 2,
      maxItems: 2,
      items: { type: 'number' },
      hint: 'give [lowest, highest], e.g. [45, 65] for a grid frequency',
    }),
    pattern: {
      type: 'string',
      minLength: 1,
      hint: 'a regular expression the text must match, e.g. ^SUN2000',
    },
    scale: { type: 'number', hint: 'factor applied before comparing with range' },
  },
  ['type'],
);

const identityRegister = register(
  'the register holding it: address and type',
  {
    map: { type: 'object', additionalProperties: { type: 'string' }, hint: 'raw value → text, e.g. { 0xE03: SH10RT }' },
  },
  ['type'],
);

export const profileSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  // referenced rather than repeated: each of the twenty-odd channel sources has both, and the
  // validator ajv generates from a repeated schema grew to 1.5 MB of code (430 ms to compile)
  $defs: {
    controlWrites: CONTROL_WRITES,
    limitMap: LIMIT_MAP,
    scaleFactor: register('the scale-factor register: address and type (usually s16)', {}, ['type']),
    signFrom: register(
      'the status register whose bits give the direction: address, type and negativeMask',
      {
        negativeMask: {
          type: 'integer',
          minimum: 1,
          maximum: 0xffffffff,
          hint: 'the bits that mean "negative", e.g. 0x0004',
        },
      },
      ['type', 'negativeMask'],
    ),
  },
  type: 'object',
  additionalProperties: false,
  required: ['name', 'manufacturer', 'models', 'source', 'identify', 'roles'],
  properties: {
    name: {
      type: 'string',
      pattern: PROFILE_NAME_PATTERN,
      minLength: 1,
      maxLength: 64,
      hint: "the file name without .yaml, e.g. 'eastron-sdm630'",
    },
    manufacturer: { type: 'string', minLength: 1, maxLength: 80, hint: 'the maker, e.g. Eastron' },
    models: {
      type: 'array',
      minItems: 1,
      items: { type: 'string', minLength: 1 },
      hint: 'list the models the profile covers',
    },
    source: DOCUMENT_SOURCE,
    defaults: {
      type: 'object',
      additionalProperties: false,
      hint: 'function, wordOrder, byteOrder, addressBase or sentinels that apply to every register',
      properties: {
        function: registerFields.function,
        wordOrder: registerFields.wordOrder,
        byteOrder: registerFields.byteOrder,
        addressBase: {
          type: 'integer',
          enum: [0, 1],
          hint: 'write 1 when the document numbers registers from 1, so the request address is one less',
        },
        sentinels: {
          type: 'object',
          additionalProperties: false,
          hint: 'per type, the raw values meaning "not available"',
          properties: Object.fromEntries(REGISTER_TYPES.map((t) => [t, registerFields.sentinels])) as SentinelDefaults,
        },
      },
    },
    control: CONTROL_SCHEMA,
    limit: LIMIT_SCHEMA,
    besideSunSpec: {
      type: 'boolean',
      hint: "true when the device serves a SunSpec map on the same unit and this profile reads the vendor's own registers next to it",
    },
    batching: {
      type: 'object',
      additionalProperties: false,
      hint: 'maxRegisters (at most 125) and maxGap',
      properties: {
        maxRegisters: {
          type: 'integer',
          minimum: 1,
          maximum: 125,
          hint: 'registers per request, at most 125 (the Modbus limit)',
        },
        maxGap: {
          type: 'integer',
          minimum: 0,
          maximum: 125,
          hint: 'unused registers a request may span to save a round trip; 0 if the device refuses undefined addresses',
        },
      },
    },
    identify: {
      type: 'object',
      additionalProperties: false,
      required: ['manufacturer', 'match'],
      hint: 'give the manufacturer and the registers (match) by which a scan recognises the device',
      properties: {
        manufacturer: { type: 'string', minLength: 1, hint: 'the maker as shown to partners' },
        model: { type: 'string', minLength: 1, hint: 'the model when the device does not report it' },
        match: {
          type: 'array',
          minItems: 1,
          hint: 'list registers and the values (in, range or pattern) a device of this kind answers with',
          items: MATCH_RULE,
        },
        unless: {
          type: 'array',
          minItems: 1,
          hint: 'list registers whose answer proves the device is another kind (a register only that kind has, with its values)',
          items: MATCH_RULE,
        },
        registers: {
          type: 'object',
          additionalProperties: false,
          hint: 'manufacturer, model, serial or version registers',
          properties: {
            manufacturer: identityRegister,
            model: identityRegister,
            serial: identityRegister,
            version: identityRegister,
          },
        },
      },
    },
    roles: {
      type: 'object',
      additionalProperties: false,
      hint: 'give at least one of inverter, battery, grid-meter, consumption-meter',
      properties: {
        inverter: role(
          {
            power_AC_W: source(POWER, 'the AC power of the inverter'),
            power_DC_W: source(POWER, 'the DC power into the inverter'),
            ...counters,
            pv: role(
              {
                power_W: source(POWER, 'the PV power'),
                outWh: source(ENERGY, 'the lifetime PV yield'),
                strings: {
                  type: 'array',
                  minItems: 1,
                  maxItems: 32,
                  items: pvString,
                  hint: 'list the PV strings (MPPT inputs) in the order the device numbers them',
                },
                stringCount: register('the register that says how many strings the device has: address and type', {}, [
                  'type',
                ]),
              },
              'power_W, outWh, strings and stringCount of the PV array behind the inverter',
            ),
            ...acLive,
            ...dcLive,
            ...temperature,
            status,
          },
          'power_AC_W, power_DC_W, inWh, outWh, pv, status, or a live channel (frequency_Hz, voltage_L1_V, temperature_C, …)',
        ),
        battery: role(
          {
            power_W: source(POWER, 'the battery power'),
            soc: source(PERCENT, 'the state of charge'),
            soh: source(PERCENT, 'the state of health'),
            capacityWh: source(ENERGY, 'the usable capacity'),
            ...counters,
            ...dcLive,
            ...temperature,
            status,
          },
          'power_W, soc, soh, capacityWh, inWh, outWh, voltage_DC_V, current_DC_A, temperature_C or status',
        ),
        'grid-meter': role(
          {
            power_W: source(POWER, 'the power at the grid connection point'),
            ...counters,
            state: STATE_SPEC,
            ...acLive,
          },
          'power_W, inWh, outWh, state, or a live channel (frequency_Hz, voltage_L1_V, …)',
        ),
        'consumption-meter': role(
          { power_W: source(POWER, 'the power of the load'), ...counters, ...acLive },
          'power_W, inWh, outWh, or a live channel (frequency_Hz, voltage_L1_V, …)',
        ),
      },
    },
  },
} as const satisfies SchemaNode;
