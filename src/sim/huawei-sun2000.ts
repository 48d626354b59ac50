/**
 * The simulated inverter seen as a Huawei SUN2000 (device-profiles/huawei-sun2000.yaml cites the
 * register document, Huawei "Solar Inverter Modbus Interface Definitions", and huawei-solar-lib's
 * registers.py, 40bf666): the same inverter the SunSpec image shows, in Huawei's holding registers
 * (addresses as the document numbers them, 32-bit values high word first), with its output limit
 * 40125 "Active power percentage derating" as the way to curtail it, so the limits loop meets a
 * vendor's limit map over real Modbus (docs/limits-vendors.md).
 *
 *   30000 Model (STR, 15 registers)        30015 SN (STR, 10)        30071 Number of PV strings (U16)
 *   30075 P_max (U32, W): what 40125 is a percentage of
 *   32016.. PV1.. voltage (I16, gain 10) and current (I16, gain 100)
 *   32064 Input power (I32, W, from the strings)     32080 Active power (I32, W, + feeding out)
 *   32085 Grid frequency (U16, gain 100)              32089 Device status (0x0200 on-grid,
 *                                                     0x0201 power limited)
 *   32106 Accumulated energy yield (U32, gain 100 kWh)
 *   40125 Active power percentage derating (I16, gain 10: 1000 = 100 %, no derating)
 *
 * No source says what the device does with 40125 once its master goes quiet, so this one keeps it
 * (the profile's revert is `unknown`, a keep-alive for the gateway). The output follows a new value
 * after the configuration's limit lag, as the SunSpec limit's does (power-limit.ts).
 */
import { MODBUS_EXCEPTION, ModbusException, RegisterBank } from './bank.js';
import type { SimConfig } from './config.js';
import type { SimDevice, SimDeviceIdentity } from './device-images.js';
import type { SiteSnapshot } from './model.js';
import { LaggedLimit } from './power-limit.js';
import type { SimRegisters } from './registers.js';

export const HUAWEI = {
  at: {
    model: 30000,
    serial: 30015,
    strings: 30071,
    pMax: 30075,
    pv1V: 32016,
    inputW: 32064,
    phaseV: 32069,
    activeW: 32080,
    hz: 32085,
    status: 32089,
    yield: 32106,
  },
  derating: 40125,
  /** 40125 at 100 %: no derating */
  full: 1000,
  status: { ON_GRID: 0x0200, POWER_LIMITED: 0x0201 },
} as const;

const u32 = (v: number) => [(v >>> 16) & 0xffff, v & 0xffff];
const i32 = (v: number) => u32(v < 0 ? v + 0x1_0000_0000 : v);
const ascii = (s: string, words: number) => {
  const b = Buffer.alloc(words * 2);
  b.write(s.slice(0, words * 2), 'latin1');
  return Array.from({ length: words }, (_, i) => b.readUInt16BE(i * 2));
};

export class HuaweiSun2000Device implements SimDevice {
  readonly registers: SimRegisters;
  private readonly info = new RegisterBank(HUAWEI.at.model, 80);
  private readonly live = new RegisterBank(32000, 120);
  private readonly limit = new RegisterBank(HUAWEI.derating, 1);
  private readonly lagged: LaggedLimit;
  /** writes that reached 40125 (tests count them) */
  writes = 0;

  constructor(
    readonly identity: SimDeviceIdentity,
    private readonly cfg: SimConfig,
    startTs: number,
  ) {
    this.registers = { holding: [this.info, this.live, this.limit], input: [] };
    this.info.write(HUAWEI.at.model, ascii(identity.model, 15));
    this.info.write(HUAWEI.at.serial, ascii(identity.serial, 10));
    this.info.write(HUAWEI.at.strings, [cfg.pv.optimisers.length]);
    this.info.write(HUAWEI.at.pMax, u32(cfg.inverter.ratedW));
    this.limit.write(HUAWEI.derating, [HUAWEI.full]);
    this.lagged = new LaggedLimit(cfg.inverter.limitLagMs ?? 1000, startTs);
  }

  /** 40125 only, within 0..100 %: anything else is refused as the device refuses a value out of range */
  write(address: number, values: readonly number[], ts: number): void {
    if (address !== HUAWEI.derating || values.length !== 1)
      throw new ModbusException(
        MODBUS_EXCEPTION.ILLEGAL_DATA_ADDRESS,
        `registers ${address}+${values.length} are not the active power derating (40125)`,
      );
    const raw = values[0]! & 0xffff;
    if (raw > HUAWEI.full)
      throw new ModbusException(MODBUS_EXCEPTION.ILLEGAL_DATA_VALUE, `40125 takes 0..1000 (0.1 %), got ${raw}`);
    this.limit.write(HUAWEI.derating, [raw]);
    this.writes++;
    this.lagged.note(ts, raw >= HUAWEI.full ? null : (raw / HUAWEI.full) * this.cfg.inverter.ratedW);
  }

  /** the raw 40125 the device holds */
  get derating(): number {
    return this.limit.read(HUAWEI.derating, 1)[0]!;
  }

  acLimitW(ts: number): number | null {
    return this.lagged.at(ts);
  }

  encode(s: SiteSnapshot): void {
    const at = HUAWEI.at;
    const ac = s.inverter.acW;
    const limited = this.lagged.at(s.ts) !== null;
    this.live.write(at.inputW, i32(Math.round(s.pvW.reduce((a, b) => a + b, 0))));
    this.live.write(at.activeW, i32(Math.round(ac)));
    this.live.write(
      at.phaseV,
      s.housePhaseV.map((v) => Math.round(v * 10)),
    );
    this.live.write(at.hz, [s.relayClosed ? 5000 : 0]);
    this.live.write(at.status, [limited ? HUAWEI.status.POWER_LIMITED : HUAWEI.status.ON_GRID]);
    this.live.write(at.yield, u32(Math.floor(s.counters.inverterAcDeliveredWh / 10)));
  }
}
