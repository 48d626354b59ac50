/**
 * The modbus-serial server "vector" of one simulated host: how a request for a unit's registers
 * is answered, shared by the Modbus TCP and RTU servers.
 *
 *   FC3 / FC4: from the unit's holding / input registers (registers.ts); outside them →
 *       exception 2; a unit without registers of that kind → exception 1; more than 125
 *       registers → exception 3. FC6/FC16: to the unit's writable controls (SimSite.write), else exception 1 or 2;
 *       coils and discrete inputs → exception 1.
 *   a unit id with no device behind it: over TCP exception 0x0B (gateway target failed to
 *       respond), so a scan moves on at once; over RTU silence, as on a real line.
 * Before answering, the site is brought to clock.now() (at most once per clock millisecond), so
 * values follow an accelerated clock without a timer of their own. Faults (faults.ts) are applied
 * here, except the frame faults of RTU, which the RTU server applies to the bytes.
 */
import type { Clock } from '../core/clock.js';
import { MODBUS_EXCEPTION, ModbusException } from './bank.js';
import type { SimHost } from './device-images.js';
import type { FrameFault, SimFaults } from './faults.js';
import { readRegisters, type SimFunction } from './registers.js';
import type { SimSite } from './site.js';

const MAX_READ = 125;

type Callback = (err: Error | null, values: number[]) => void;
type SingleCallback = (err: Error | null, value: number) => void;

export interface VectorOptions {
  transport: 'tcp' | 'rtu';
  faults?: SimFaults;
  /** TCP: drop every connection of this server (fault 'reset') */
  resetConnections?: () => void;
  /** RTU: spoil the bytes of the next answer to this unit */
  spoilNextAnswer?: (unitId: number, fault: FrameFault) => void;
}

/** Brings the site to the clock's time before an answer, at most once per clock millisecond. */
export function siteRefresher(site: SimSite, clock: Clock): () => void {
  let lastMs = Number.NaN;
  return () => {
    const now = clock.now();
    const ms = Math.floor(now);
    if (ms === lastMs) return;
    lastMs = ms;
    site.update(now);
  };
}

/** Where a vector finds a unit's registers: the simulated site, or a fixed register image (tests). */
export type UnitSource = Pick<SimSite, 'unit'> & Partial<Pick<SimSite, 'write'>>;

export function simVector(site: UnitSource, host: SimHost, refresh: () => void, opts: VectorOptions) {
  const serve = (fn: SimFunction, addr: number, len: number, unitId: number, cb: Callback): void => {
    const fault = opts.faults?.take(host, unitId);
    const regs = site.unit(host, unitId);
    if (!regs) {
      if (opts.transport === 'tcp')
        cb(new ModbusException(MODBUS_EXCEPTION.GATEWAY_TARGET_FAILED, `no unit ${unitId} on the ${host} host`), []);
      return;
    }
    const answer = (override?: { address: number; values: number[] }) => {
      if (len > MAX_READ) {
        cb(
          new ModbusException(MODBUS_EXCEPTION.ILLEGAL_DATA_VALUE, `read of ${len} registers exceeds ${MAX_READ}`),
          [],
        );
        return;
      }
      refresh();
      let values: number[];
      try {
        values = readRegisters(regs, fn, addr, len);
        if (override) {
          override.values.forEach((v, i) => {
            const at = override.address + i - addr;
            if (at >= 0 && at < len) values[at] = v & 0xffff;
          });
        }
      } catch (err) {
        cb(err instanceof Error ? err : new Error(String(err)), []);
        return;
      }
      cb(null, values);
    };
    switch (fault?.kind) {
      case undefined:
        answer();
        return;
      case 'silent':
        return;
      case 'exception':
        cb(new ModbusException(fault.code, `injected exception ${fault.code}`), []);
        return;
      case 'delay':
        setTimeout(answer, fault.ms);
        return;
      case 'override':
        answer(fault);
        return;
      case 'reset':
        opts.resetConnections?.();
        return;
      case 'garbage':
      case 'bad-crc':
      case 'truncated':
      case 'noisy':
      case 'short-count':
        opts.spoilNextAnswer?.(unitId, fault.kind);
        answer();
        return;
    }
  };
  const one = (fn: SimFunction, addr: number, unitId: number, cb: SingleCallback) =>
    serve(fn, addr, 1, unitId, (err, v) => cb(err, v[0] ?? 0));
  const illegal = () => {
    throw new ModbusException(MODBUS_EXCEPTION.ILLEGAL_FUNCTION, 'the simulator takes no coil writes');
  };
  // FC6 and FC16: to the unit's writable controls (storage-124.ts); the same faults as reads
  const write = (addr: number, values: number[], unitId: number, cb: (err: Error | null) => void): void => {
    const fault = opts.faults?.take(host, unitId);
    if (fault?.kind === 'silent') return;
    if (fault?.kind === 'exception') {
      cb(new ModbusException(fault.code, `injected exception ${fault.code}`));
      return;
    }
    if (fault?.kind === 'reset') {
      opts.resetConnections?.();
      return;
    }
    if (!site.unit(host, unitId)) {
      if (opts.transport === 'tcp')
        cb(new ModbusException(MODBUS_EXCEPTION.GATEWAY_TARGET_FAILED, `no unit ${unitId} on the ${host} host`));
      return;
    }
    try {
      refresh();
      if (!site.write) throw new ModbusException(MODBUS_EXCEPTION.ILLEGAL_FUNCTION, 'this image takes no writes');
      site.write(host, unitId, addr, values);
    } catch (err) {
      cb(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    cb(null);
  };
  // arities matter: modbus-serial passes a callback (and so allows silence and late answers) only to 4- and 3-argument functions
  return {
    getMultipleHoldingRegisters: (addr: number, len: number, unitId: number, cb: Callback): void =>
      serve('holding', addr, len, unitId, cb),
    getHoldingRegister: (addr: number, unitId: number, cb: SingleCallback): void => one('holding', addr, unitId, cb),
    getMultipleInputRegisters: (addr: number, len: number, unitId: number, cb: Callback): void =>
      serve('input', addr, len, unitId, cb),
    getInputRegister: (addr: number, unitId: number, cb: SingleCallback): void => one('input', addr, unitId, cb),
    getCoil: (_addr: number, _unitId: number): boolean => illegal(),
    getDiscreteInput: (_addr: number, _unitId: number): boolean => illegal(),
    setCoil: (_addr: number, _value: boolean, _unitId: number): void => illegal(),
    setRegister: (addr: number, value: number, unitId: number, cb: (err: Error | null) => void): void =>
      write(addr, [value], unitId, cb),
    setRegisterArray: (addr: number, values: number[], unitId: number, cb: (err: Error | null) => void): void =>
      write(addr, values, unitId, cb),
  };
}

export type SimVector = ReturnType<typeof simVector>;
