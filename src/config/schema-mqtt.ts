/** site.yaml `uplink:` and `homeassistant:`: the two MQTT connections. */
import { narrow, type SchemaNode } from '../yaml/schema.js';

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
export const UPLINK = {
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
export const HOMEASSISTANT = {
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
