/** The built-in site simulator: what the CLI and the daemon need from src/sim. */

export { MODBUS_EXCEPTION, ModbusException, RegisterBank } from './bank.js';
export type { BatteryBlockConfig, GridMeterKind, OptimiserConfig, SimConfig } from './config.js';
export { defaultSimConfig, SimConfigError, validateSimConfig } from './config.js';
export type { SimFault } from './faults.js';
export { SimFaults } from './faults.js';
export type { BatterySnapshot, SiteCounters, SiteSnapshot } from './model.js';
export { SiteModel } from './model.js';
export type { SimRegisters } from './registers.js';
export { readRegisters } from './registers.js';
export type { SimRtuOptions, SimRtuServer } from './rtu-server.js';
export { startSimRtuServer } from './rtu-server.js';
export { SDM630, Sdm630Meter } from './sdm630.js';
export type { SimEndpoint, SimServerOptions, SimServers } from './servers.js';
export { startSimServers } from './servers.js';
export type { SimDeviceIdentity, SimDeviceRole, SimHost } from './site.js';
export { SimSite } from './site.js';
