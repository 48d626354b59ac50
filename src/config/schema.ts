/**
 * JSON Schema (draft-07, for ajv) of site.yaml: the single source of the shape, the bounds and the
 * defaults. `description` is the meaning shown to installers (docs/configuration.md, example file) and
 * `hint` is what the error message suggests when a value is wrong, so the advice lives next to the
 * rule it explains. Checks that need more than one value (unique ids, addresses, zone names) are
 * in semantic.ts.
 */
import { DEVICE_ROLES } from '../core/device-role.js';
import { ID_HINT, ID_PATTERN, type SchemaNode } from '../yaml/schema.js';
import { CONNECTION } from './schema-connection.js';
import { CONTROL } from './schema-control.js';
import { GRID_OPERATOR } from './schema-grid-operator.js';
import { DYNAMIC_TARIFFS, HTTP_LIMITS } from './schema-limits.js';
import { HOMEASSISTANT, UPLINK } from './schema-mqtt.js';
import { MODBUS_PROXY } from './schema-proxy.js';
import { SITE_LIMIT_KEYS } from './schema-site-limits.js';
import { TARIFF } from './schema-tariff.js';
import { CONFIG_VERSION } from './version.js';

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
    retention: {
      type: 'object',
      description: 'how long the 15-minute buckets are kept on the SD card',
      default: {},
      additionalProperties: false,
      properties: {
        fifteenMinuteYears: {
          type: 'integer',
          description:
            'years PT15M buckets are kept; older ones are rolled up into hours once a day, so PT1H and P1D answers stay for ever and PT15M ends there. Left out: every bucket is kept for ever',
          minimum: 1,
          maximum: 100,
          hint: 'use whole years, 1 or more (e.g. 2), or leave the key out to keep every bucket',
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
            description:
              'battery only: id of the inverter on whose DC bus it sits (default: the inverter at the same address, else one on the same wire, else the first inverter)',
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
      description:
        "the site's grid connection limits (export, import, generation, fail-safe: docs/limits.md) and what one API client may tie up or store on the box",
      default: {},
      additionalProperties: false,
      properties: { ...SITE_LIMIT_KEYS, http: HTTP_LIMITS, dynamicTariffs: DYNAMIC_TARIFFS },
    },
    homeassistant: HOMEASSISTANT,
    control: CONTROL,
    modbusProxy: MODBUS_PROXY,
    gridOperator: GRID_OPERATOR,
    version: {
      type: 'integer',
      description: 'format of this file; a file without it is version 1 (docs/configuration.md)',
      minimum: 1,
      hint: `write the version of the format the file is written in, ${CONFIG_VERSION} for this release`,
    },
  },
} as const satisfies SchemaNode;
