import type { RegisterReader } from '../../core/register-reader.js';
import { ModbusError, toModbusError } from '../errors.js';
import { decodeModel, type ModelValues, neededLength } from './decode.js';
import { END_MODEL_ID, MODELS, SUNS_MARKER, SUNSPEC_BASES } from './models.js';

export interface DiscoveredModel {
  id: number;
  /** address of the first register after the model's ID and L header */
  address: number;
  /** L: registers after the header */
  length: number;
}

export interface SunSpecMap {
  base: number;
  models: DiscoveredModel[];
}

/** Largest read a Modbus PDU allows (FC3: 125 registers). */
export const MAX_READ = 125;
/** A chain longer than this is a device bug or not SunSpec at all; stop instead of walking forever. */
const MAX_MODELS = 64;

/**
 * Find the SunS marker at the standard bases and walk the model chain to the end marker
 * (SunSpec Modbus specification, "Device Modbus Map"). A base that answers with an exception
 * is not this device's base; a timeout means the device is not answering and is thrown. When
 * every base answers with an exception, that exception is the device's answer: it is counted
 * and shown as the exception it is (with its code), not as a decode problem.
 */
export async function discoverSunSpec(reader: RegisterReader, unitId: number): Promise<SunSpecMap> {
  let refused: ModbusError | undefined;
  let answered = false;
  for (const base of SUNSPEC_BASES) {
    let marker: number[];
    try {
      marker = await reader.readHolding(unitId, base, 2);
    } catch (err) {
      const e = toModbusError(err);
      if (e.kind !== 'exception') throw e;
      refused = e;
      continue;
    }
    answered = true;
    if (marker[0] !== SUNS_MARKER[0] || marker[1] !== SUNS_MARKER[1]) continue;
    return { base, models: await walk(reader, unitId, base + 2) };
  }
  if (refused && !answered)
    throw new ModbusError(
      'exception',
      `unit ${unitId} answered the SunSpec marker read at ${SUNSPEC_BASES.join(', ')} with an exception: ${refused.message}`,
      refused.exceptionCode,
    );
  throw new ModbusError('decode', `no SunSpec marker 'SunS' at ${SUNSPEC_BASES.join(', ')} on unit ${unitId}`);
}

/**
 * The chain ends at the end marker (ID 0xFFFF). Devices that leave the marker out end it with an
 * illegal-address exception or with zeros (no model has ID 0); both are taken as the end so the
 * models before them stay usable. MAX_MODELS bounds a chain that never ends.
 */
async function walk(reader: RegisterReader, unitId: number, start: number): Promise<DiscoveredModel[]> {
  const models: DiscoveredModel[] = [];
  let addr = start;
  for (let n = 0; n < MAX_MODELS; n++) {
    if (addr + 2 > 0x10000) return models;
    let header: number[];
    try {
      header = await reader.readHolding(unitId, addr, 2);
    } catch (err) {
      const e = toModbusError(err);
      if (e.kind === 'exception' && models.length > 0) return models;
      throw e;
    }
    const [id, length] = header;
    if (id === END_MODEL_ID || id === 0 || id === undefined || length === undefined) return models;
    if (addr + 2 + length > 0xffff)
      throw new ModbusError('decode', `model ${id} at ${addr} runs past the register space`);
    models.push({ id, address: addr + 2, length });
    addr += 2 + length;
  }
  throw new ModbusError('decode', `SunSpec model chain longer than ${MAX_MODELS} models; no end marker found`);
}

/** Read a model's registers in PDU-sized chunks and decode it; unknown models are skipped by the caller. */
export async function readModel(reader: RegisterReader, unitId: number, m: DiscoveredModel): Promise<ModelValues> {
  const def = MODELS.get(m.id);
  if (!def) throw new ModbusError('decode', `SunSpec model ${m.id} is not known to this gateway`);
  const regs: number[] = [];
  const length = neededLength(def, m.length);
  for (let off = 0; off < length; off += MAX_READ) {
    const n = Math.min(MAX_READ, length - off);
    regs.push(...(await reader.readHolding(unitId, m.address + off, n)));
  }
  return decodeModel(def, regs);
}
