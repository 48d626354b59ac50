/**
 * The test's Modbus client: modbus-serial is CommonJS and its default-export typings do not
 * survive NodeNext resolution, so the constructor is loaded through require.
 */
import { createRequire } from 'node:module';
import type { ModbusRTU as ModbusClientType } from 'modbus-serial/ModbusRTU.js';

const require = createRequire(import.meta.url);
export const ModbusClient = require('modbus-serial') as typeof ModbusClientType;
export type ModbusClient = ModbusClientType;
