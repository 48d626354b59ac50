/**
 * The validated shape of site.yaml. src/config/schema.ts is the single source of the rules;
 * this file is the type the rest of the daemon sees after loadConfig() succeeded, with every
 * default filled in.
 */
export type DeviceRole = 'inverter' | 'battery' | 'grid-meter' | 'consumption-meter';

export interface TcpConnection {
  type: 'tcp';
  host: string;
  port: number;
  unitId: number;
  /** per-request timeout, ms */
  timeoutMs: number;
}
export type DeviceConnection = TcpConnection;

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
  http: { host: string; port: number };
  /** directory holding sitegw.db; relative paths resolve against the config file's folder */
  dataDir: string;
  poll: { intervalSeconds: number };
  api: { socScale: 'percent' | 'fraction' };
  grid: { debounce: number };
  ws: { maxEntriesPerMessage: number };
  devices: DeviceConfig[];
}
