/** site.yaml `tariff:`: the site's own import and export prices (docs/tariffs.md). */
import type { SchemaNode } from '../yaml/schema.js';

const TARIFF_TYPES = ['flat', 'time-of-use', 'dynamic'];

const price = (what: string) =>
  ({
    type: 'number',
    description: `${what} per kWh in site.currency`,
    minimum: -1000000,
    maximum: 1000000,
    hint: `give the ${what} per kWh as a plain number in site.currency, e.g. 0.32 (negative is allowed)`,
  }) as const satisfies SchemaNode;

/** A price with a default, kept as a key of its own so the default is part of the inferred type. */
const priceOr = (what: string, dflt: number) =>
  ({
    type: 'number',
    description: `${what} per kWh in site.currency (default ${dflt})`,
    default: dflt,
    minimum: -1000000,
    maximum: 1000000,
    hint: `give the ${what} per kWh as a plain number in site.currency, e.g. 0.32 (negative is allowed)`,
  }) as const satisfies SchemaNode;

const tariffType = <V extends string>(value: V, description: string) =>
  ({
    type: 'string',
    description,
    enum: [value],
    hint: `write one of: ${TARIFF_TYPES.join(', ')}`,
  }) as const satisfies SchemaNode;

/** 'HH:MM' on a quarter hour; 24:00 only as an end. */
const clock = (what: string, end: boolean) =>
  ({
    type: 'string',
    description: `${what}, local time 'HH:MM' on a quarter hour${end ? "; '24:00' is the end of the day" : ''}`,
    pattern: end ? '^(?:(?:[01][0-9]|2[0-3]):(?:00|15|30|45)|24:00)$' : '^(?:[01][0-9]|2[0-3]):(?:00|15|30|45)$',
    hint: `write the ${what} in quotes as 'HH:MM' on a quarter hour, e.g. '07:00' or '22:30'${end ? " ('24:00' for midnight)" : ''}`,
  }) as const satisfies SchemaNode;

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;

/** One time-of-use period, in the site's local time. */
export const TOU_PERIOD = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'to', 'importPrice'],
  hint: 'describe the period with from, to, importPrice and optionally exportPrice and days',
  properties: {
    days: {
      type: 'array',
      description: 'days the period starts on (default every day)',
      default: WEEKDAYS,
      minItems: 1,
      hint: 'list days as mon, tue, wed, thu, fri, sat, sun, e.g. [mon, tue, wed, thu, fri]',
      items: { type: 'string', enum: WEEKDAYS, hint: 'use mon, tue, wed, thu, fri, sat or sun' },
    },
    from: clock('start', false),
    to: clock('end (before from: the period runs past midnight)', true),
    importPrice: price('import (buying) price'),
    exportPrice: priceOr('export (feed-in) price', 0),
  },
} as const satisfies SchemaNode;

/**
 * The site's tariff, which savings are priced with. Time-of-use periods must cover every
 * quarter hour of the week exactly once (semantic.ts), so no bucket is silently left unpriced.
 */
export const TARIFF = {
  type: 'object',
  description: 'what the site pays for imported and earns for exported energy; savings are priced with it',
  hint: 'give type: flat with importPrice and exportPrice, type: time-of-use with periods, or type: dynamic with a tariffId',
  discriminator: { propertyName: 'type' },
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'importPrice'],
      properties: {
        type: tariffType(
          'flat',
          "'flat' one price all the time, 'time-of-use' prices by local time of day, 'dynamic' a dynamic tariff stored on the gateway",
        ),
        importPrice: price('import (buying) price'),
        exportPrice: priceOr('export (feed-in) price', 0),
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'periods'],
      properties: {
        type: tariffType('time-of-use', 'prices by local time of day and weekday'),
        periods: {
          type: 'array',
          description:
            'periods of local time with their prices; together they cover every quarter hour of the week once',
          minItems: 1,
          hint: "list periods, each '- { from: '07:00', to: '22:00', importPrice: 0.35 }'",
          items: TOU_PERIOD,
        },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'tariffId'],
      properties: {
        type: tariffType('dynamic', 'a dynamic tariff created with POST /api/v1/dynamicTariffs'),
        tariffId: {
          type: 'string',
          description: 'the tariffId that POST /api/v1/dynamicTariffs answered',
          minLength: 1,
          maxLength: 200,
          pattern: '^[A-Za-z0-9_-]+$',
          hint: 'copy the tariffId from the answer of POST /api/v1/dynamicTariffs, e.g. 3f0c6a52-9a4e-4c1e-8d0b-5b7e2f6f1a90',
        },
      },
    },
  ],
} as const satisfies SchemaNode;
