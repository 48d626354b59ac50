/** The built-in site simulator: what the CLI and the daemon need from src/sim. */
export { defaultSimConfig, validateSimConfig, SimConfigError } from './config.js';
export type { SimConfig, BatteryBlockConfig, OptimiserConfig } from './config.js';
export { SiteModel } from './model.js';
export type { SiteSnapshot, SiteCounters, BatterySnapshot } from './model.js';
export { SimSite } from './site.js';
export type { SimDeviceIdentity, SimHost, SimDeviceRole } from './site.js';
export { startSimServers } from './servers.js';
export type { SimServers, SimServerOptions, SimEndpoint } from './servers.js';
export { RegisterBank, ModbusException, MODBUS_EXCEPTION } from './bank.js';
