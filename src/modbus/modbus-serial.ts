/**
 * modbus-serial is CommonJS with hand-written typings whose default export TypeScript's NodeNext
 * resolution reads as a namespace; this is the one place that bridges it.
 */
import { createRequire } from 'node:module';
import type { ModbusRTU as ModbusClient } from 'modbus-serial/ModbusRTU.js';

const require = createRequire(import.meta.url);
export const ModbusRTU = require('modbus-serial') as typeof ModbusClient;
export type ModbusRTU = ModbusClient;
