/**
 * JSON Schema (draft-07, for ajv) of site.yaml: the single source of the shape, the bounds and the
 * defaults. `description` is the meaning shown to installers (docs/configuration.md, example file) and
 * `hint` is what the error message suggests when a value is wrong, so the advice lives next to the
 * rule it explains. Checks that need more than one value (unique ids, addresses, zone names) are
 * in semantic.ts.
 */
import { DEVICE_ROLES } from '../core/device-role.js';
import { ID_HINT, ID_PATTERN, narrow, type SchemaNode } from '../yaml/schema.js';
import { CONFIG_VERSION } from './version.js';

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
const CONNECTION = {
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
const TARIFF = {
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

const pemFile = (what: string, example: string) =>
  ({
    type: 'string',
    description: what,
    minLength: 1,
    hint: `give the path of a PEM file, e.g. ${example}`,
  }) as const satisfies SchemaNode;

/**
 * How one MQTT connection is made: the uplink's and Home Assistant's (src/uplink/link.ts serves
 * both). `{siteId}` in clientId stands for site.id.
 */
const mqttConnection = (clientId: string, urlExample: string) =>
  ({
    url: {
      type: 'string',
      description:
        'broker URL: mqtt:// (plain, port 1883), mqtts:// (TLS, 8883), ws:// or wss:// (WebSocket, with its path)',
      pattern: '^(mqtt|mqtts|ws|wss)://[^\\s/?#]+[^\\s]*$',
      maxLength: 500,
      hint: `write the broker URL with its scheme, e.g. ${urlExample}`,
    },
    protocolVersion: narrow<4 | 5>()({
      type: 'integer',
      description: 'MQTT version: 5, or 4 for MQTT 3.1.1',
      default: 5,
      minimum: 4,
      maximum: 5,
      hint: 'write 5 for MQTT 5 or 4 for MQTT 3.1.1 (an older broker)',
    }),
    clientId: {
      type: 'string',
      description: "MQTT client id; '{siteId}' stands for site.id",
      default: clientId,
      minLength: 1,
      maxLength: 128,
      pattern: '^[A-Za-z0-9._:{}-]+$',
      hint: `use letters, digits and . _ : -, e.g. '${clientId}' (each MQTT connection needs its own)`,
    },
    username: {
      type: 'string',
      description: 'user name at the broker',
      minLength: 1,
      maxLength: 200,
      hint: 'give the user name the broker operator issued',
    },
    password: {
      type: 'string',
      description: 'password at the broker (keep site.yaml readable only by the sitegw user)',
      minLength: 1,
      maxLength: 500,
      hint: 'give the password the broker operator issued, in quotes',
    },
    tls: {
      type: 'object',
      description: 'certificates for mqtts:// and wss://',
      default: {},
      additionalProperties: false,
      properties: {
        ca: pemFile(
          "PEM CA certificate(s) the broker's certificate is checked against; default the system's trusted CAs",
          '/etc/sitegw/mqtt/ca.pem',
        ),
        cert: pemFile('PEM client certificate, for brokers that want one', '/etc/sitegw/mqtt/client.pem'),
        key: pemFile('PEM private key of the client certificate', '/etc/sitegw/mqtt/client.key'),
      },
    },
    keepaliveSeconds: {
      type: 'integer',
      description: 'MQTT keep-alive: a silent connection is taken as lost after 1.5 times this, seconds',
      default: 60,
      minimum: 5,
      maximum: 3600,
      hint: 'use seconds between 5 and 3600, usually 60',
    },
    reconnectMaxSeconds: {
      type: 'integer',
      description: 'longest wait between two connection attempts (the wait starts at 1 s and doubles), seconds',
      default: 60,
      minimum: 1,
      maximum: 3600,
      hint: 'use seconds between 1 and 3600, usually 60',
    },
  }) as const satisfies Readonly<Record<string, SchemaNode>>;

/**
 * The MQTT uplink to the cloud (src/uplink). Optional: without it the gateway publishes nothing.
 * `{siteId}` in clientId and topicPrefix stands for site.id.
 */
const UPLINK = {
  type: 'object',
  description: 'the MQTT uplink to the cloud; leave it out for none',
  hint: 'give at least url, e.g. uplink: { url: mqtts://broker.example.com:8883 }',
  additionalProperties: false,
  required: ['url'],
  properties: {
    ...mqttConnection('sitegw-{siteId}', 'mqtts://broker.example.com:8883 or wss://broker.example.com/mqtt'),
    topicPrefix: {
      type: 'string',
      description: "first levels of every topic; '{siteId}' stands for site.id",
      default: 'sitegw/{siteId}',
      minLength: 1,
      maxLength: 200,
      pattern: '^(?!/)(?!.*//)(?!.*/$)[^+#\\u0000]+$',
      hint: "write topic levels joined by '/', without + or # and without a '/' at either end, e.g. 'sitegw/{siteId}'",
    },
    statusIntervalSeconds: {
      type: 'integer',
      description: 'how often the retained status message is refreshed while connected, seconds',
      default: 60,
      minimum: 5,
      maximum: 3600,
      hint: 'use seconds between 5 and 3600, usually 60',
    },
    publishJitterSeconds: {
      type: 'integer',
      description:
        "a bucket close's telemetry waits this site's share of it (the same for every close, spread over the fleet by site id) before it is published, so a fleet's gateways do not all publish at minutes 0/15/30/45 at once; seconds, 0 = at once",
      default: 5,
      minimum: 0,
      maximum: 300,
      hint: 'use seconds between 0 and 300, usually 5 (docs/fleet-scale.md)',
    },
    outbox: {
      type: 'object',
      description: 'messages kept on disk until the broker has them',
      default: {},
      additionalProperties: false,
      properties: {
        maxAgeDays: {
          type: 'integer',
          description: 'messages older than this are dropped undelivered (counted and reported), days',
          default: 30,
          minimum: 1,
          maximum: 366,
          hint: 'use whole days between 1 and 366, usually 30',
        },
        maxMegabytes: {
          type: 'integer',
          description:
            'the oldest messages are dropped (counted and reported) when the undelivered ones exceed this, MB',
          default: 100,
          minimum: 1,
          maximum: 10000,
          hint: 'use megabytes between 1 and 10000, usually 100',
        },
      },
    },
    replay: {
      type: 'object',
      description: 'pacing of the messages sent to the broker (mostly felt after an outage)',
      default: {},
      additionalProperties: false,
      properties: {
        messagesPerSecond: {
          type: 'integer',
          description: 'most messages published per second',
          default: 50,
          minimum: 1,
          maximum: 100000,
          hint: 'use a whole number between 1 and 100000, usually 50',
        },
        maxInflight: {
          type: 'integer',
          description:
            "most messages published and not yet acknowledged at once (lowered to the broker's receive maximum)",
          default: 20,
          minimum: 1,
          maximum: 1000,
          hint: 'use a whole number between 1 and 1000, usually 20',
        },
      },
    },
  },
} as const satisfies SchemaNode;

/**
 * Home Assistant MQTT discovery (src/homeassistant): its own broker and connection, separate from
 * the uplink, so a site can have either, both or neither.
 */
const HOMEASSISTANT = {
  type: 'object',
  description: 'Home Assistant MQTT discovery; leave it out for none',
  hint: 'give at least url, e.g. homeassistant: { url: mqtt://homeassistant.local:1883 }',
  additionalProperties: false,
  required: ['url'],
  properties: {
    ...mqttConnection('sitegw-ha-{siteId}', 'mqtt://homeassistant.local:1883'),
    discoveryPrefix: {
      type: 'string',
      description: "Home Assistant's discovery prefix (its MQTT integration setting)",
      default: 'homeassistant',
      minLength: 1,
      maxLength: 100,
      pattern: '^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$',
      hint: "write the prefix Home Assistant's MQTT integration listens on, usually 'homeassistant'",
    },
    stateTopicPrefix: {
      type: 'string',
      description: "first levels of the state and availability topics; '{siteId}' stands for site.id",
      default: 'sitegw-ha/{siteId}',
      minLength: 1,
      maxLength: 200,
      pattern: '^(?!/)(?!.*//)(?!.*/$)[^+#\\u0000]+$',
      hint: "write topic levels joined by '/', without + or # and without a '/' at either end, e.g. 'sitegw-ha/{siteId}'",
    },
    stateIntervalSeconds: {
      type: 'integer',
      description: 'how often the sensor states are published, seconds (not on every poll)',
      default: 10,
      minimum: 1,
      maximum: 3600,
      hint: 'use seconds between 1 and 3600, usually 10',
    },
  },
} as const satisfies SchemaNode;

/** A whole number with its bounds; the hint names them and the default. */
const bounded = (description: string, dflt: number, min: number, max: number, unit = 'a whole number') =>
  ({
    type: 'integer',
    description,
    default: dflt,
    minimum: min,
    maximum: max,
    hint: `use ${unit} between ${min} and ${max}, usually ${dflt}`,
  }) as const satisfies SchemaNode;
const seconds = (description: string, dflt: number, min: number, max: number) =>
  bounded(description, dflt, min, max, 'whole seconds');

/**
 * What one client may hold of the box's sockets and time (docs/security.md "HTTP limits"). The
 * defaults are sized for a Pi serving a handful of LAN partners; they bound what a hostile host
 * on the LAN can tie up, not what a well-behaved client needs.
 */
const HTTP_LIMITS = {
  type: 'object',
  description: 'timeouts and connection caps of the API port (HTTP and WebSocket)',
  default: {},
  additionalProperties: false,
  properties: {
    headersSeconds: seconds(
      'a request whose headers have not all arrived this long after it began is answered 408 and closed',
      10,
      1,
      300,
    ),
    requestSeconds: seconds(
      'a request (headers and body) not received completely this long after it began is answered 408 and closed; at least headersSeconds',
      30,
      1,
      600,
    ),
    idleSeconds: seconds(
      'a connection on which nothing is sent or received for this long is closed (a WebSocket is kept alive by its pings instead)',
      60,
      1,
      3600,
    ),
    keepAliveSeconds: seconds(
      'an idle keep-alive connection is closed after this long without a new request',
      5,
      1,
      600,
    ),
    maxConnections: bounded(
      'most open connections on the API port, WebSockets included; further ones are closed at once',
      128,
      1,
      10000,
    ),
    maxConnectionsPerAddress: bounded(
      'most open connections from one client address, WebSockets included',
      32,
      1,
      10000,
    ),
  },
} as const satisfies SchemaNode;

/**
 * Quotas on dynamic tariffs (docs/security.md "Tariff ownership and quotas"): a partner's writes
 * go to the Pi's SD card, so how much one client may store is bounded.
 */
const DYNAMIC_TARIFFS = {
  type: 'object',
  description: 'quotas on the dynamic tariffs API clients store on the gateway',
  default: {},
  additionalProperties: false,
  properties: {
    maxPerClient: bounded('most dynamic tariffs one API client may own', 10, 1, 1000),
    maxValuesPerTariff: bounded(
      'most price values one dynamic tariff may hold (350400 = ten years of quarter hours)',
      350400,
      96,
      10000000,
    ),
    maxValuesPerClientPerDay: bounded(
      'most price values one API client may store in 24 hours, over all its tariffs (a PATCH that replaces values counts its new ones)',
      50000,
      96,
      10000000,
    ),
  },
} as const satisfies SchemaNode;

/** The root mapping keys; the edges of the file an installer most often misspells. */
export const siteSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  additionalProperties: false,
  required: ['site', 'devices'],
  properties: {
    site: {
      type: 'object',
      description: 'who and where the site is',
      hint: "give the site's id, name, timezone, currency and location",
      additionalProperties: false,
      required: ['id', 'name', 'timezone', 'currency', 'location'],
      properties: {
        id: {
          type: 'string',
          description: 'stable site id, the siteId of the API and the root of every stream id',
          minLength: 1,
          maxLength: 64,
          pattern: ID_PATTERN,
          hint: ID_HINT,
        },
        name: {
          type: 'string',
          description: 'human name shown to partners',
          minLength: 1,
          maxLength: 200,
          hint: "write the site's name, e.g. 'Miller family home'",
        },
        timezone: {
          type: 'string',
          description: 'IANA time zone; daily and monthly buckets start at local midnight',
          hint: 'use an IANA zone name such as Europe/Berlin or America/New_York',
        },
        currency: {
          type: 'string',
          description: 'ISO 4217 code used for tariffs and savings',
          hint: 'use a three-letter ISO 4217 code such as EUR, GBP or USD',
        },
        location: {
          type: 'object',
          description: 'site coordinates in decimal degrees (WGS 84)',
          hint: 'give latitude and longitude in decimal degrees',
          additionalProperties: false,
          required: ['latitude', 'longitude'],
          properties: {
            latitude: {
              type: 'number',
              description: 'degrees north (negative south), -90..90',
              minimum: -90,
              maximum: 90,
              hint: 'latitude is degrees north between -90 and 90, e.g. 52.52 for Berlin',
            },
            longitude: {
              type: 'number',
              description: 'degrees east (negative west), -180..180',
              minimum: -180,
              maximum: 180,
              hint: 'longitude is degrees east between -180 and 180, e.g. 13.40 for Berlin',
            },
          },
        },
      },
    },
    http: {
      type: 'object',
      description: 'where the Energy Site API (HTTP and WebSocket) listens',
      default: {},
      additionalProperties: false,
      properties: {
        host: {
          type: 'string',
          description: 'bind address; 0.0.0.0 to serve the whole LAN',
          default: '127.0.0.1',
          minLength: 1,
          hint: 'use 127.0.0.1 for this box only or 0.0.0.0 for the whole LAN',
        },
        port: {
          type: 'integer',
          description: 'TCP port of the API; 0 picks any free port (tests, side-by-side runs)',
          default: 8080,
          minimum: 0,
          maximum: 65535,
          hint: 'use a free TCP port between 1 and 65535, usually 8080',
        },
        tls: {
          type: 'object',
          description: 'HTTPS (and WSS) for the API',
          default: {},
          additionalProperties: false,
          properties: {
            mode: {
              type: 'string',
              description: "'auto': HTTPS on every address but loopback; 'always': HTTPS on loopback too",
              default: 'auto',
              enum: ['auto', 'always'],
              hint: "use 'auto' (HTTPS off loopback) or 'always'",
            },
            cert: {
              type: 'string',
              description:
                'PEM certificate (chain) file; without cert and key a self-signed pair is created in dataDir/tls on first start',
              minLength: 1,
              hint: 'give the path of a PEM certificate file, e.g. /etc/sitegw/tls/cert.pem',
            },
            key: {
              type: 'string',
              description: 'PEM private key file of the certificate',
              minLength: 1,
              hint: 'give the path of the PEM private key file, e.g. /etc/sitegw/tls/key.pem',
            },
          },
        },
        insecure: {
          type: 'boolean',
          description:
            'serve plain HTTP on a LAN address (tokens travel unencrypted; a warning is logged at every start)',
          default: false,
          hint: 'write true only on a network you trust completely; leave it out to get HTTPS',
        },
      },
    },
    dataDir: {
      type: 'string',
      description: "folder for sitegw.db; relative paths are taken from site.yaml's folder",
      default: './data',
      minLength: 1,
      hint: 'give a folder path, e.g. ./data or /var/lib/sitegw',
    },
    poll: {
      type: 'object',
      description: 'how often devices are read',
      default: {},
      additionalProperties: false,
      properties: {
        intervalSeconds: {
          type: 'integer',
          description: 'seconds between two reads of every device',
          default: 10,
          minimum: 1,
          maximum: 3600,
          hint: 'use whole seconds between 1 and 3600, usually 10',
        },
      },
    },
    api: {
      type: 'object',
      description: 'output conventions of the API and the uplink',
      default: {},
      additionalProperties: false,
      properties: {
        socScale: {
          type: 'string',
          description: 'state of charge as percent (0-100) or fraction (0-1)',
          default: 'percent',
          enum: ['percent', 'fraction'],
          hint: "use 'percent' unless a client was built for 0-1 values",
        },
      },
    },
    grid: {
      type: 'object',
      description: 'grid relay watching',
      default: {},
      additionalProperties: false,
      properties: {
        debounce: {
          type: 'integer',
          description: 'consecutive polls a relay change must hold before it counts',
          default: 2,
          minimum: 1,
          hint: 'use a whole number of polls, 1 or more, usually 2',
        },
      },
    },
    ws: {
      type: 'object',
      description: 'WebSocket streams',
      default: {},
      additionalProperties: false,
      properties: {
        maxEntriesPerMessage: {
          type: 'integer',
          description: 'most entries sent in one WebSocket message',
          default: 100,
          minimum: 1,
          maximum: 10000,
          hint: 'use a whole number between 1 and 10000, usually 100',
        },
      },
    },
    tariff: TARIFF,
    uplink: UPLINK,
    auth: {
      type: 'object',
      description: 'the on-device token service (OAuth 2)',
      default: {},
      additionalProperties: false,
      properties: {
        accessTokenSeconds: {
          type: 'integer',
          description: 'lifetime of an access token (expires_in), seconds',
          default: 3600,
          minimum: 60,
          maximum: 86400,
          hint: 'use seconds between 60 and 86400, usually 3600',
        },
        refreshTokenDays: {
          type: 'integer',
          description: 'a refresh token unused for this many days expires and the customer consents again',
          default: 30,
          minimum: 1,
          maximum: 365,
          hint: 'use whole days between 1 and 365, usually 30',
        },
        codeSeconds: {
          type: 'integer',
          description: 'lifetime of an authorization code, seconds',
          default: 60,
          minimum: 10,
          maximum: 600,
          hint: 'use seconds between 10 and 600, usually 60',
        },
        maxFailedAttempts: {
          type: 'integer',
          description:
            'failed token or login attempts per address before further tries from it are refused for a while; a client id or the owner account takes three times as many from all addresses together',
          default: 10,
          minimum: 1,
          maximum: 10000,
          hint: 'use a whole number between 1 and 10000, usually 10',
        },
        failureWindowSeconds: {
          type: 'integer',
          description: 'the window failed attempts are counted in, seconds',
          default: 300,
          minimum: 1,
          maximum: 86400,
          hint: 'use seconds between 1 and 86400, usually 300',
        },
      },
    },
    devices: {
      type: 'array',
      description: 'the Modbus devices of the site',
      minItems: 1,
      hint: "list the site's devices, each starting with '- id: ...'",
      items: {
        type: 'object',
        hint: 'describe the device with id, role, profile and connection',
        additionalProperties: false,
        required: ['id', 'role', 'profile', 'connection'],
        properties: {
          id: {
            type: 'string',
            description: 'stable device id: the API deviceId and the root of its stream ids',
            minLength: 1,
            maxLength: 64,
            pattern: ID_PATTERN,
            hint: ID_HINT,
          },
          name: {
            type: 'string',
            description: 'optional human name',
            minLength: 1,
            maxLength: 200,
            hint: "write a short name, e.g. 'Garage inverter'",
          },
          role: {
            type: 'string',
            description: 'what the device is on the site',
            enum: DEVICE_ROLES,
            hint: 'the grid connection meter is grid-meter; a meter of the house load is consumption-meter',
          },
          profile: {
            type: 'string',
            description: "'sunspec' to discover the register map, or a file name in device-profiles/ without .yaml",
            minLength: 1,
            maxLength: 64,
            pattern: ID_PATTERN,
            hint: "use 'sunspec' or the name of a device profile, e.g. 'acme-meter'",
          },
          inverter: {
            type: 'string',
            description: 'battery only: id of the inverter on whose DC bus it sits (default: the first inverter)',
            minLength: 1,
            hint: 'name the id of an inverter device of this file',
          },
          pollIntervalSeconds: {
            type: 'integer',
            description: 'poll period for this device, overriding poll.intervalSeconds',
            minimum: 1,
            maximum: 3600,
            hint: 'use whole seconds between 1 and 3600, or leave it out',
          },
          meterSign: {
            type: 'string',
            description:
              "SunSpec meters only: the sign of the meter's power. auto (default) reads it as the vendor is documented to send it (SolarEdge: + export); import-positive or export-positive says it for this meter",
            enum: ['auto', 'import-positive', 'export-positive'],
            hint: "leave it out (auto), or write import-positive or export-positive as 'sitegw scan' or the meter's manual says",
          },
          sunspecMeter: {
            type: 'integer',
            description:
              "SunSpec meters only: which meter of the unit's model chain this device is, 1 = the first (e.g. SolarEdge's meters after the inverter); default: the unit's meter",
            minimum: 1,
            maximum: 8,
            hint: "write the meter's number as 'sitegw scan' lists it, e.g. 2",
          },
          connection: CONNECTION,
        },
      },
    },
    limits: {
      type: 'object',
      description: 'what one client may tie up or store on the box',
      default: {},
      additionalProperties: false,
      properties: { http: HTTP_LIMITS, dynamicTariffs: DYNAMIC_TARIFFS },
    },
    homeassistant: HOMEASSISTANT,
    version: {
      type: 'integer',
      description: 'format of this file; a file without it is version 1 (docs/configuration.md)',
      minimum: 1,
      hint: `write the version of the format the file is written in, ${CONFIG_VERSION} for this release`,
    },
  },
} as const satisfies SchemaNode;
