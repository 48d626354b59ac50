/**
 * The validated shape of site.yaml, read off its schema (src/config/schema.ts): the type the rest
 * of the daemon sees after loadConfig() succeeded, with every default filled in. The names below
 * are views of that one type, not second definitions.
 */
import type { DeviceConnection } from '../core/connection.js';
import type { Infer } from '../yaml/schema.js';
import type { siteSchema } from './schema.js';
import type { TOU_PERIOD } from './schema-tariff.js';

export type { DeviceConnection, RtuConnection, RtuOverTcpConnection, TcpConnection } from '../core/connection.js';
export type { DeviceRole } from '../core/device-role.js';

export type SiteConfig = Infer<typeof siteSchema>;
export type DeviceConfig = SiteConfig['devices'][number];
/** how a SunSpec meter signs its power: auto = as its vendor is documented to (src/profiles/sunspec-vendors.ts) */
export type MeterSign = NonNullable<DeviceConfig['meterSign']>;
export type AuthConfig = SiteConfig['auth'];
/** Timeouts and connection caps of the API port (docs/security.md "HTTP limits"). */
export type HttpLimits = SiteConfig['limits']['http'];
/** What one API client may store of dynamic tariffs (docs/security.md "Tariff ownership and quotas"). */
export type TariffQuota = SiteConfig['limits']['dynamicTariffs'];
/** The site's grid connection limits, fail-safe and negative-price rule (docs/limits.md). */
export type SiteLimitsConfig = Omit<SiteConfig['limits'], 'http' | 'dynamicTariffs'>;
/** The site's tariff: fixed prices, prices by local time of day, or a dynamic tariff stored on the gateway. */
export type SiteTariff = NonNullable<SiteConfig['tariff']>;
/** One time-of-use period in the site's local time; `to` before `from` runs past midnight into the next day. */
export type TouPeriod = Infer<typeof TOU_PERIOD>;
export type Weekday = TouPeriod['days'][number];
/** Battery control and its safety envelope (docs/control.md). */
export type ControlConfig = SiteConfig['control'];
/** One shared device of `modbusProxy:` (docs/modbus-proxy.md). */
export type ModbusProxyConfig = SiteConfig['modbusProxy'][number];
/** The MQTT uplink; `{siteId}` in clientId and topicPrefix is already replaced by the site id after loading. */
export type UplinkConfig = NonNullable<SiteConfig['uplink']>;
/** Home Assistant MQTT discovery; `{siteId}` in clientId and stateTopicPrefix is already replaced. */
export type HomeAssistantConfig = NonNullable<SiteConfig['homeassistant']>;
/** How one MQTT connection is made (src/uplink/link.ts): the keys the uplink and Home Assistant share. */
export type MqttConnectionConfig = Pick<UplinkConfig, keyof UplinkConfig & keyof HomeAssistantConfig>;

/** The grid operator's CSIP-AUS server and the device's credentials (docs/grid-operator.md); paths absolute after loading. */
export type GridOperatorConfig = NonNullable<SiteConfig['gridOperator']>;

/** Fails to compile when the schema's connections and the modbus contract in core drift apart. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const connectionMatchesContract: Same<DeviceConfig['connection'], DeviceConnection> = true;
void connectionMatchesContract;
