/**
 * The validated shape of site.yaml. src/config/schema.ts is the single source of the rules;
 * this file is the type the rest of the daemon sees after loadConfig() succeeded, with every
 * default filled in.
 */
import type { DeviceRole } from '../core/roles.js';

export type { DeviceRole };
/** how a SunSpec meter signs its power: auto = as its vendor is documented to (src/profiles/sunspec-vendors.ts) */
export type MeterSign = 'auto' | 'import-positive' | 'export-positive';

export interface TcpConnection {
  type: 'tcp';
  host: string;
  port: number;
  unitId: number;
  /** per-request timeout, ms */
  timeoutMs: number;
}
/** Modbus RTU on a serial port (an RS-485 adapter); every device of one port shares its line settings. */
export interface RtuConnection {
  type: 'rtu';
  /** serial device path, e.g. /dev/ttyUSB0 */
  device: string;
  baudRate: number;
  parity: 'none' | 'even' | 'odd';
  dataBits: 8;
  stopBits: 1 | 2;
  /** 1..247 */
  unitId: number;
  timeoutMs: number;
  /** silence between frames, ms; absent = 3.5 character times at baudRate (src/modbus/rtu-timing.ts) */
  interFrameDelayMs?: number;
}
/** Modbus RTU frames (with CRC, no MBAP header) through a transparent serial server's TCP port. */
export interface RtuOverTcpConnection {
  type: 'rtu-over-tcp';
  host: string;
  port: number;
  /** 1..247 */
  unitId: number;
  timeoutMs: number;
}
export type DeviceConnection = TcpConnection | RtuConnection | RtuOverTcpConnection;

export interface DeviceConfig {
  /** stable device id, used as the API deviceId and the root of its stream ids */
  id: string;
  role: DeviceRole;
  /** 'sunspec' or the name of a file in device-profiles/ (without .yaml) */
  profile: string;
  connection: DeviceConnection;
  /** for a battery: the inverter device id whose DC bus it sits on (defaults to the first inverter) */
  inverter?: string;
  /** poll period override, seconds */
  pollIntervalSeconds?: number;
  /** optional human name */
  name?: string;
  /** SunSpec meters only: the sign of the meter's power; absent = auto */
  meterSign?: MeterSign;
  /** SunSpec meters only: which meter model of the unit's chain (1 = the first); absent = the preferred one */
  sunspecMeter?: number;
}

export interface AuthConfig {
  /** lifetime of an access token (`expires_in`), seconds */
  accessTokenSeconds: number;
  /** a refresh token not used for this long expires, days */
  refreshTokenDays: number;
  /** lifetime of an authorization code, seconds */
  codeSeconds: number;
  /** failed token or login attempts per address before they are refused for a while; an identity takes 3x from all addresses (src/auth/rate-limit.ts) */
  maxFailedAttempts: number;
  /** the window the failures are counted in, seconds */
  failureWindowSeconds: number;
}

/** Timeouts and connection caps of the API port (docs/security.md "HTTP limits"). */
export interface HttpLimits {
  /** all headers of a request within this long, else 408 */
  headersSeconds: number;
  /** the whole request (headers and body) within this long, else 408; >= headersSeconds */
  requestSeconds: number;
  /** a connection with no traffic either way for this long is closed */
  idleSeconds: number;
  /** an idle keep-alive connection is closed after this long */
  keepAliveSeconds: number;
  /** open connections on the port, WebSockets included */
  maxConnections: number;
  /** open connections from one remote address */
  maxConnectionsPerAddress: number;
}

/** What one API client may store of dynamic tariffs (docs/security.md "Tariff ownership and quotas"). */
export interface TariffQuota {
  maxPerClient: number;
  maxValuesPerTariff: number;
  /** values stored per client in any 24 hours */
  maxValuesPerClientPerDay: number;
}

export interface SiteConfig {
  site: {
    id: string;
    name: string;
    /** IANA time zone, e.g. Europe/Berlin */
    timezone: string;
    /** ISO 4217 */
    currency: string;
    location: { latitude: number; longitude: number };
  };
  http: {
    host: string;
    port: number;
    /** HTTPS: `auto` serves it off loopback, `always` on loopback too; cert/key absent = a self-signed pair in dataDir/tls */
    tls: { mode: 'auto' | 'always'; cert?: string; key?: string };
    /** serve plain HTTP on a LAN address anyway (logged as a warning at every start) */
    insecure: boolean;
  };
  /** the on-device token service (src/auth) */
  auth: AuthConfig;
  /** directory holding sitegw.db; relative paths resolve against the config file's folder */
  dataDir: string;
  poll: { intervalSeconds: number };
  api: { socScale: 'percent' | 'fraction' };
  grid: { debounce: number };
  ws: { maxEntriesPerMessage: number };
  /** what the site pays and earns per kWh in site.currency; savings need it */
  tariff?: SiteTariff;
  /** the MQTT uplink to the cloud (src/uplink); absent = no uplink */
  uplink?: UplinkConfig;
  /** Home Assistant MQTT discovery (src/homeassistant); absent = none */
  homeassistant?: HomeAssistantConfig;
  devices: DeviceConfig[];
  /** what one client may tie up or store (docs/security.md) */
  limits: { http: HttpLimits; dynamicTariffs: TariffQuota };
}

/** How one MQTT connection is made (src/uplink/link.ts): the uplink's and Home Assistant's. */
export interface MqttConnectionConfig {
  /** mqtt://, mqtts://, ws:// or wss:// broker URL */
  url: string;
  /** 5 = MQTT 5, 4 = MQTT 3.1.1 (the protocol level in CONNECT) */
  protocolVersion: 4 | 5;
  clientId: string;
  username?: string;
  password?: string;
  /** PEM files for mqtts:// and wss:// (absolute after loading) */
  tls: { ca?: string; cert?: string; key?: string };
  keepaliveSeconds: number;
  /** longest wait between two connection attempts, real seconds */
  reconnectMaxSeconds: number;
}

/** The MQTT uplink; `{siteId}` in clientId and topicPrefix is already replaced by the site id. */
export interface UplinkConfig extends MqttConnectionConfig {
  topicPrefix: string;
  /** how often the retained status is refreshed while connected, real seconds */
  statusIntervalSeconds: number;
  /** a bucket close's telemetry waits a per-site share of this before it is published, daemon-clock seconds */
  publishJitterSeconds: number;
  outbox: { maxAgeDays: number; maxMegabytes: number };
  /** pacing of the drain: messages per real second and unacknowledged messages at once */
  replay: { messagesPerSecond: number; maxInflight: number };
}

/** Home Assistant MQTT discovery; `{siteId}` in clientId and stateTopicPrefix is already replaced. */
export interface HomeAssistantConfig extends MqttConnectionConfig {
  discoveryPrefix: string;
  stateTopicPrefix: string;
  /** how often sensor states are published, real seconds */
  stateIntervalSeconds: number;
}

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** One time-of-use period in the site's local time; `to` before `from` runs past midnight into the next day. */
export interface TouPeriod {
  /** the days the period starts on */
  days: Weekday[];
  /** 'HH:MM' on a quarter hour */
  from: string;
  /** 'HH:MM' on a quarter hour, '24:00' for midnight at the end of the day */
  to: string;
  importPrice: number;
  exportPrice: number;
}

/** The site's tariff: fixed prices, prices by local time of day, or a dynamic tariff stored on the gateway. */
export type SiteTariff =
  | { type: 'flat'; importPrice: number; exportPrice: number }
  | { type: 'time-of-use'; periods: TouPeriod[] }
  | { type: 'dynamic'; tariffId: string };
