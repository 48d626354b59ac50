/**
 * A storage device's control side for tests, served over real Modbus TCP: the holding registers a
 * vendor's register document defines (test/fixtures/control/*.yaml, written from the document,
 * not from the gateway or the simulator), each write (FC6 or FC16) recorded in order. Reads and
 * writes of an address the document does not define answer exception 2, as the devices do.
 * `behave` lets a fixture play the device's own logic (a revert timer, a value it clamps).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerTCP } from 'modbus-serial';
import { parse } from 'yaml';
import type { StorageCommand } from '../../src/core/storage-control.js';
import { MODBUS_EXCEPTION, ModbusException } from '../../src/sim/bank.js';

export interface ControlRegister {
  /** PDU address */
  address: number;
  words: number[];
  /** the document's number and name */
  name: string;
}

export interface ExpectedWrite {
  address: number;
  words: number[];
}

export interface ControlFixture {
  name: string;
  title: string;
  sources: { title: string; url: string; commit?: string }[];
  profile: string;
  unitId: number;
  registers: ControlRegister[];
  /** each command and the writes the document prescribes for it (address, words, order) */
  steps: { command: StorageCommand; why: string; writes: ExpectedWrite[] }[];
}

export interface RecordedWrite {
  unitId: number;
  address: number;
  words: number[];
}

export interface ControlDevice {
  host: string;
  port: number;
  /** every write the device received, in order */
  readonly writes: RecordedWrite[];
  /** the words at a register as the device holds them */
  words(address: number, count: number): number[];
  /** change a register as the device itself would (its timer ran out, an installer's app) */
  set(address: number, words: number[]): void;
  close(): Promise<void>;
}

export const CONTROL_FIXTURE_DIR = fileURLToPath(new URL('../fixtures/control/', import.meta.url));

export function loadControlFixture(name: string): ControlFixture {
  const f = parse(readFileSync(join(CONTROL_FIXTURE_DIR, `${name}.yaml`), 'utf8')) as ControlFixture;
  return { ...f, name };
}

type Callback = (err: Error | null, value?: unknown) => void;

/**
 * A device timer as its document describes it: a write to `restartOn` (re)starts it; `timer` is
 * the register holding its length (U16 or U32, in seconds or minutes); when it runs out the
 * device puts `revertTo` (a value, or the value of another register) into `target`.
 */
export interface RevertTimer {
  restartOn: number;
  timer: { address: number; words: 1 | 2; wordOrder: 'big' | 'little'; unit: 's' | 'min' };
  target: number;
  revertTo: { value: number } | { from: number };
}

/** `clamp`: the largest raw word the device keeps at an address (it stores that instead of more). */
export async function startControlDevice(
  f: Pick<ControlFixture, 'unitId' | 'registers'> & { inputs?: ControlRegister[] },
  opts: { clamp?: Record<number, number>; revert?: RevertTimer; now?: () => number } = {},
): Promise<ControlDevice> {
  const regs = new Map<number, number>();
  let restartedAt = Number.NaN;
  // the device's own timer, looked at whenever a master talks to it
  const tick = () => {
    const r = opts.revert;
    if (!r || !opts.now || Number.isNaN(restartedAt)) return;
    const w = [regs.get(r.timer.address)!, ...(r.timer.words === 2 ? [regs.get(r.timer.address + 1)!] : [])];
    const [hi, lo] = r.timer.words === 1 ? [0, w[0]!] : r.timer.wordOrder === 'big' ? [w[0]!, w[1]!] : [w[1]!, w[0]!];
    const seconds = (hi * 0x10000 + lo) * (r.timer.unit === 'min' ? 60 : 1);
    if (opts.now() < restartedAt + seconds * 1000) return;
    regs.set(r.target, 'value' in r.revertTo ? r.revertTo.value : regs.get(r.revertTo.from)!);
    restartedAt = Number.NaN;
  };
  for (const r of f.registers) r.words.forEach((w, i) => regs.set(r.address + i, w));
  // input registers (FC4), read-only: a rating the document gives as one (Sungrow's 5001)
  const inputs = new Map<number, number>();
  for (const r of f.inputs ?? []) r.words.forEach((w, i) => inputs.set(r.address + i, w));
  const readInputs = (unitId: number, address: number, count: number) => {
    if (unitId !== f.unitId) throw new ModbusException(MODBUS_EXCEPTION.GATEWAY_TARGET_FAILED, `no unit ${unitId}`);
    return Array.from({ length: count }, (_, i) => {
      const v = inputs.get(address + i);
      if (v === undefined) throw new ModbusException(MODBUS_EXCEPTION.ILLEGAL_DATA_ADDRESS, `no input ${address + i}`);
      return v;
    });
  };
  const writes: RecordedWrite[] = [];
  const check = (unitId: number, address: number, count: number) => {
    tick();
    if (unitId !== f.unitId) throw new ModbusException(MODBUS_EXCEPTION.GATEWAY_TARGET_FAILED, `no unit ${unitId}`);
    for (let i = 0; i < count; i++)
      if (!regs.has(address + i))
        throw new ModbusException(MODBUS_EXCEPTION.ILLEGAL_DATA_ADDRESS, `no register ${address + i}`);
  };
  const words = (address: number, count: number) => Array.from({ length: count }, (_, i) => regs.get(address + i)!);
  const store = (unitId: number, address: number, values: number[]) => {
    check(unitId, address, values.length);
    writes.push({ unitId, address, words: [...values] });
    values.forEach((v, i) => {
      const max = opts.clamp?.[address + i];
      regs.set(address + i, max !== undefined ? Math.min(v, max) : v);
      if (address + i === opts.revert?.restartOn) restartedAt = opts.now?.() ?? Number.NaN;
    });
  };
  const guard = (cb: Callback, fn: () => unknown) => {
    try {
      cb(null, fn());
    } catch (e) {
      cb(e as Error);
    }
  };
  const vector = {
    getHoldingRegister: (addr: number, unitId: number, cb: Callback) =>
      guard(cb, () => (check(unitId, addr, 1), regs.get(addr))),
    getMultipleHoldingRegisters: (addr: number, len: number, unitId: number, cb: Callback) =>
      guard(cb, () => (check(unitId, addr, len), words(addr, len))),
    setRegister: (addr: number, value: number, unitId: number, cb: Callback) =>
      guard(cb, () => store(unitId, addr, [value])),
    setRegisterArray: (addr: number, values: number[], unitId: number, cb: Callback) =>
      guard(cb, () => store(unitId, addr, values)),
    getInputRegister: (addr: number, unitId: number, cb: Callback) =>
      inputs.size === 0
        ? cb(new ModbusException(MODBUS_EXCEPTION.ILLEGAL_FUNCTION, 'holding registers only'))
        : guard(cb, () => readInputs(unitId, addr, 1)[0]),
    getMultipleInputRegisters: (addr: number, len: number, unitId: number, cb: Callback) =>
      inputs.size === 0
        ? cb(new ModbusException(MODBUS_EXCEPTION.ILLEGAL_FUNCTION, 'holding registers only'))
        : guard(cb, () => readInputs(unitId, addr, len)),
    getCoil: () => {
      throw new ModbusException(MODBUS_EXCEPTION.ILLEGAL_FUNCTION, 'no coils');
    },
    getDiscreteInput: () => {
      throw new ModbusException(MODBUS_EXCEPTION.ILLEGAL_FUNCTION, 'no discrete inputs');
    },
    setCoil: () => {
      throw new ModbusException(MODBUS_EXCEPTION.ILLEGAL_FUNCTION, 'no coils');
    },
  };
  const { server, port } = await listenFree(vector);
  return {
    host: '127.0.0.1',
    port,
    writes,
    words,
    set: (address, values) => values.forEach((v, i) => regs.set(address + i, v)),
    close: () =>
      new Promise<void>((resolve) => {
        const socks = (server as ServerTCP & { socks?: Map<{ destroy(): void }, unknown> }).socks;
        for (const s of socks?.keys() ?? []) s.destroy();
        server.close(() => resolve());
      }),
  };
}

async function listenFree(vector: object): Promise<{ server: ServerTCP; port: number }> {
  const { listen } = await import('../../src/sim/servers.js');
  return listen(vector as Parameters<typeof listen>[0], '127.0.0.1', 0);
}
