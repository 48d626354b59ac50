/** The built-in site simulator: what the CLI and the daemon need from src/sim. */
export { defaultSimConfig, validateSimConfig, SimConfigError } from './config.js';
export type { SimConfig, BatteryBlockConfig, OptimiserConfig, GridMeterKind } from './config.js';
export { SiteModel } from './model.js';
export type { SiteSnapshot, SiteCounters, BatterySnapshot } from './model.js';
export { SimSite } from './site.js';
export type { SimDeviceIdentity, SimHost, SimDeviceRole } from './site.js';
export { startSimServers } from './servers.js';
export type { SimServers, SimServerOptions, SimEndpoint } from './servers.js';
export { RegisterBank, ModbusException, MODBUS_EXCEPTION } from './bank.js';
export { startSimRtuServer } from './rtu-server.js';
export type { SimRtuServer, SimRtuOptions } from './rtu-server.js';
export { SimFaults } from './faults.js';
export type { SimFault } from './faults.js';
export { Sdm630Meter, SDM630 } from './sdm630.js';
export { readRegisters } from './registers.js';
export type { SimRegisters } from './registers.js';
