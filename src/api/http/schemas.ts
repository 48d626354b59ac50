import { type TNumber, type TOptional, type TString, Type } from '@sinclair/typebox';
import { CHANNEL_TABLE, type ChannelId, type ChannelValue, DEVICE_KINDS, GRID_STATES } from '../../core/channels.js';
import { ErrorBodySchema } from './errors.js';
import { COMMA_LIST } from './lenient-query.js';

export const ErrorResponses = {
  400: { ...ErrorBodySchema, description: 'Malformed or missing parameter' },
  404: { ...ErrorBodySchema, description: 'Not found' },
} as const;

/** docs/design.md "partial periods", as the interval parameters of telemetry and savings describe it */
export const WHOLE_PERIODS =
  'An interval that cuts a period of the resolution is widened to whole periods (PT15M and PT1H on UTC, P1D on local midnight in the site time zone, P1M calendar months): ' +
  'every entry stands for its whole period, so deviceId + interval is a stable key. A period still in progress holds the data so far (docs/api.md).';

/**
 * The shape of an ISO 8601 interval as the server reads it (telemetry/interval.ts): two parts
 * around one "/", each a duration or a date-time with Z or an offset. Whether it parses and ends
 * after it starts is the handler's check, whose message says what is wrong; a space before the
 * offset passes here so the handler can say that "+" wants encoding as %2B.
 */
const DATE_TIME = String.raw`[+-]?\d{4}[^/]*T[^/]*(?:[Zz]|[ +-]\d{2}(?::?\d{2})?)`;
const PART = `(?:[Pp][^/]+|${DATE_TIME})`;
export const INTERVAL_PATTERN = String.raw`^\s*${PART}/${PART}\s*$`;

/** An `interval` parameter (or body field): its pattern, an example, and what it means. */
export const IntervalString = (description: string) =>
  Type.String({ pattern: INTERVAL_PATTERN, description, example: '2026-11-01T00:00:00Z/P1D' });

/** A response schema with the description the OpenAPI document shows for it (else "Default Response"). */
export const described = <T extends object>(description: string, schema: T): T => ({ ...schema, description });

/**
 * A comma-separated list query parameter; it may also be repeated (lenient-query.ts). Its pattern
 * is what the server reads: the listed values, blanks around them and empty items allowed, at
 * least one value.
 */
export const CommaList = (description: string, values: readonly string[]) => {
  const item = `(?:${values.join('|')})`;
  return Type.String({
    description: `${description}. Comma-separated; the parameter may also be repeated (a=x&a=y is a=x,y)`,
    pattern: String.raw`^(?:\s*,)*\s*${item}\s*(?:,\s*(?:${item}\s*)?)*$`,
    [COMMA_LIST]: true,
  });
};

/** A boolean query parameter: true/false/1/0 in any case; an empty value counts as absent (lenient-query.ts). */
export const QueryBoolean = (defaultValue: boolean, description: string) =>
  Type.Optional(
    Type.Boolean({
      default: defaultValue,
      description: `${description}. true/false/1/0 in any case; empty means the default (${defaultValue})`,
    }),
  );

export const SiteRecord = Type.Object({
  siteId: Type.String(),
  name: Type.String(),
  timezone: Type.String({ description: 'IANA time zone' }),
  currency: Type.String({ description: 'ISO 4217' }),
});

export const PublishTo = Type.Array(Type.Object({ clientId: Type.String(), data: Type.Array(Type.String()) }), {
  description: 'Partners that receive this device in their realtime telemetry',
});

/** docs/design.md "Control: operation mode and plans" */
export const OperationModeSchema = (description: string) =>
  Type.Union(
    [Type.Literal('self-consumption'), Type.Literal('plan'), Type.Literal('backup'), Type.Literal('optimise')],
    { description },
  );

export const DeviceRecord = Type.Object({
  deviceId: Type.String(),
  siteId: Type.String(),
  kind: Type.String({ description: 'inverter, battery_pack or meter' }),
  manufacturer: Type.Union([Type.String(), Type.Null()]),
  model: Type.Union([Type.String(), Type.Null()]),
  serial: Type.Union([Type.String(), Type.Null()]),
  online: Type.Boolean(),
  lastSeen: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  publishTo: PublishTo,
  operationMode: Type.Optional(
    OperationModeSchema('storage systems only (an inverter with batteries): what drives the battery (docs/control.md)'),
  ),
  reserveSoc: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 100,
      description:
        'storage systems only: the reserve state of charge in force, percent (docs/control.md "The reserve")',
    }),
  ),
  errors: Type.Object(
    {
      timeout: Type.Integer({ minimum: 0 }),
      exception: Type.Integer({ minimum: 0 }),
      connection: Type.Integer({ minimum: 0 }),
      crc: Type.Integer({ minimum: 0 }),
      decode: Type.Integer({ minimum: 0 }),
      protocol: Type.Integer({ minimum: 0 }),
    },
    {
      description:
        'failed Modbus requests to the device since the gateway started, by kind (docs/install.md "Troubleshooting")',
    },
  ),
});

export const TopologyNode = Type.Recursive(
  (Self) =>
    Type.Object(
      {
        id: Type.String(),
        kind: Type.Optional(Type.String()),
        category: Type.Optional(Type.String()),
        currentType: Type.Optional(Type.String()),
        nodeType: Type.Optional(Type.String()),
        nodes: Type.Optional(Type.Array(Self)),
        channels: Type.Optional(Type.Array(Type.Object({ id: Type.String(), unit: Type.String() }))),
        node: Type.Optional(Type.Object({ id: Type.String(), kind: Type.String() })),
        maxCapacity_J: Type.Optional(Type.Number()),
        leftCurrent: Type.Optional(Type.String()),
        rightCircuit: Type.Optional(Self),
      },
      { $id: 'TopologyNode' },
    ),
  { $id: 'TopologyNode' },
);

/** Telemetry entry (docs/api.md "Telemetry entry"); channels present only when requested and measured. */
const DeviceKindSchema = Type.String({
  enum: [...DEVICE_KINDS],
  description:
    'the spec shows battery_pack, inverter and meter; sitegw also sends pv for PV array streams (the aggregate …__dcm and one per optimiser), which are none of those (docs/api.md)',
});

type ChannelSchema<C extends ChannelId> = TOptional<ChannelValue<C> extends number ? TNumber : TString>;
/** one optional field per channel of the channel table (core/channels.ts), in its order */
const channelFields = Object.fromEntries(
  CHANNEL_TABLE.map((c) => [
    c.id,
    Type.Optional(c.value === 'state' ? Type.String({ enum: [...GRID_STATES] }) : Type.Number()),
  ]),
) as { [C in ChannelId]: ChannelSchema<C> };

export const TelemetryEntry = Type.Object({
  deviceKind: DeviceKindSchema,
  kind: DeviceKindSchema,
  deviceId: Type.String({ description: 'sensor (stream) id' }),
  interval: Type.String({ description: 'ISO 8601 interval, canonical UTC start/end' }),
  ...channelFields,
});
