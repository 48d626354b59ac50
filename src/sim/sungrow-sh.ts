/**
 * The simulated hybrid inverter seen as a Sungrow SH10RT, as Sungrow's "Communication Protocol of
 * Residential Hybrid Inverter" V1.0.20 lays out its registers (device-profiles/sungrow-sh-rt.yaml
 * cites it): the same inverter, battery and grid the SunSpec images show, in Sungrow's input
 * registers, and its EMS holding registers as the way to command the battery.
 *
 * Addresses below are on the wire: the document's numbers minus one. Input registers, 32-bit
 * values LOW word first: 4989 SN (10 registers), 4999 device type code (0x0E03 SH10RT), 5003
 * total output energy (0.1 kWh), 5016 total DC power (W), 12999 system state (0x0040 run, 0x1000
 * off-grid run), 13000 running state (bit 1 charging, bit 2 discharging), 13002 total PV
 * generation, 13007 load power (S32), 13009 export power (S32, + export), 13021 battery power
 * (magnitude, W), 13022 battery level (0.1 %), 13023 SoH (0.1 %), 13026 / 13040 total battery
 * discharge / charge, 13033 total active power (S32), 13036 / 13045 total import / export.
 * Holding registers 13049 EMS mode (0 self-consumption, 2 forced), 13050 charge/discharge
 * command (0xAA charge, 0xBB discharge, 0xCC stop), 13051 charge/discharge power (W): in forced
 * mode the battery power is the command's, within what the blocks can take or give (the model
 * clips it to their limits and SoC); the inverter has no command timer.
 *
 * The feed-in limitation (device-profiles/sungrow-sh-rt.yaml cites modbus_sungrow.yaml, ec0d9fb):
 * holding 13073 "Feed-in power limit" (W) and 13086 "Feed-in limitation" (0xAA on, 0x55 off); on,
 * the inverter holds the export its meter reads at most the limit, by holding its AC output at
 * most the house's draw plus the limit (the house as last seen: the inverter's own regulation
 * lags a reading, and a new limit takes the configuration's limit lag). Input 5000 "Nominal output
 * power" (0.1 kW) is its rating.
 */
import { MODBUS_EXCEPTION, ModbusException, RegisterBank } from './bank.js';
import type { SimConfig } from './config.js';
import type { SimDevice, SimDeviceIdentity } from './device-images.js';
import { int32LowFirst } from './em340.js';
import type { SiteSnapshot, StorageWindow } from './model.js';
import { LaggedLimit } from './power-limit.js';
import type { SimRegisters } from './registers.js';

export const SUNGROW = {
  deviceType: 0x0e03,
  at: {
    serial: 4989,
    deviceType: 4999,
    outputKWh: 5003,
    dcW: 5016,
    systemState: 12999,
    runningState: 13000,
    pvKWh: 13002,
    loadW: 13007,
    exportW: 13009,
    batteryW: 13021,
    socPermille: 13022,
    sohPermille: 13023,
    dischargedKWh: 13026,
    acW: 13033,
    nominalTenthKW: 5000,
    importKWh: 13036,
    chargedKWh: 13040,
    exportKWh: 13045,
  },
  ems: { mode: 13049, command: 13050, powerW: 13051 },
  feedIn: { limitW: 13073, switch: 13086, ON: 0xaa, OFF: 0x55 },
  emsMode: { SELF_CONSUMPTION: 0, FORCED: 2, EXTERNAL: 3, VPP: 4 },
  command: { CHARGE: 0xaa, DISCHARGE: 0xbb, STOP: 0xcc },
  systemState: { RUN: 0x0040, OFF_GRID_RUN: 0x1000 },
  running: { CHARGING: 0x0002, DISCHARGING: 0x0004 },
} as const;

/** a U32 of 0.1 kWh steps, low word first */
const tenthKWh = (wh: number) => int32LowFirst(Math.floor(wh / 100));
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

export class SungrowShDevice implements SimDevice {
  readonly registers: SimRegisters;
  private readonly low = new RegisterBank(4989, 32);
  private readonly high = new RegisterBank(12999, 50);
  private readonly ems = new RegisterBank(SUNGROW.ems.mode, 3);
  private readonly feedIn = new RegisterBank(SUNGROW.feedIn.limitW, SUNGROW.feedIn.switch - SUNGROW.feedIn.limitW + 1);
  private readonly exportLimit: LaggedLimit;
  /** the house's draw at the last reading, W */
  private houseW = 0;

  constructor(
    readonly identity: SimDeviceIdentity,
    cfg: SimConfig,
    startTs = 0,
  ) {
    this.registers = { holding: [this.ems, this.feedIn], input: [this.low, this.high] };
    this.low.write(SUNGROW.at.nominalTenthKW, [Math.round(cfg.inverter.ratedW / 100)]);
    this.feedIn.write(SUNGROW.feedIn.switch, [SUNGROW.feedIn.OFF]);
    this.exportLimit = new LaggedLimit(cfg.inverter.limitLagMs ?? 1000, startTs);
    const sn = Buffer.alloc(20);
    sn.write(identity.serial.slice(0, 20), 'latin1');
    this.low.write(
      SUNGROW.at.serial,
      Array.from({ length: 10 }, (_, i) => sn.readUInt16BE(i * 2)),
    );
    this.low.write(SUNGROW.at.deviceType, [SUNGROW.deviceType]);
    this.ems.write(SUNGROW.ems.mode, [SUNGROW.emsMode.SELF_CONSUMPTION, SUNGROW.command.STOP, 0]);
  }

  write(address: number, values: readonly number[], ts: number): void {
    if (this.feedIn.contains(address, values.length)) {
      this.writeFeedIn(address, values, ts);
      return;
    }
    if (!this.ems.contains(address, values.length))
      throw new ModbusException(
        MODBUS_EXCEPTION.ILLEGAL_DATA_ADDRESS,
        `registers ${address}+${values.length} are not EMS settings`,
      );
    const next = this.ems.read(SUNGROW.ems.mode, 3);
    values.forEach((v, i) => {
      next[address + i - SUNGROW.ems.mode] = v;
    });
    const [mode, command] = next as [number, number, number];
    if (!(Object.values(SUNGROW.emsMode) as number[]).includes(mode))
      throw new ModbusException(MODBUS_EXCEPTION.ILLEGAL_DATA_VALUE, `EMS mode ${mode} is not one the document lists`);
    if (!(Object.values(SUNGROW.command) as number[]).includes(command))
      throw new ModbusException(
        MODBUS_EXCEPTION.ILLEGAL_DATA_VALUE,
        `command 0x${command.toString(16)} is not 0xAA, 0xBB or 0xCC`,
      );
    this.ems.write(SUNGROW.ems.mode, next);
  }

  /** 13073 any W, 13086 0xAA or 0x55 only; registers between them are not writable */
  private writeFeedIn(address: number, values: readonly number[], ts: number): void {
    const f = SUNGROW.feedIn;
    values.forEach((v, i) => {
      const at = address + i;
      if (at !== f.limitW && at !== f.switch)
        throw new ModbusException(MODBUS_EXCEPTION.ILLEGAL_DATA_ADDRESS, `register ${at} is not a feed-in setting`);
      if (at === f.switch && v !== f.ON && v !== f.OFF)
        throw new ModbusException(
          MODBUS_EXCEPTION.ILLEGAL_DATA_VALUE,
          `feed-in limitation 0x${v.toString(16)} is not 0xAA or 0x55`,
        );
    });
    this.feedIn.write(address, values);
    const [limitW] = this.feedIn.read(f.limitW, 1);
    const [on] = this.feedIn.read(f.switch, 1);
    this.exportLimit.note(ts, on === f.ON ? limitW! : null);
  }

  /** the output the feed-in limitation allows at ts: the house as last read plus the limit */
  acLimitW(ts: number): number | null {
    const limit = this.exportLimit.at(ts);
    return limit === null ? null : Math.max(0, this.houseW + limit);
  }

  storageWindow(_ts: number): StorageWindow | null {
    const [mode, command, powerW] = this.ems.read(SUNGROW.ems.mode, 3) as [number, number, number];
    if (mode !== SUNGROW.emsMode.FORCED) return null;
    const w = command === SUNGROW.command.CHARGE ? powerW : command === SUNGROW.command.DISCHARGE ? -powerW : 0;
    return { loW: w, hiW: w, gridCharge: true, untilTs: Number.POSITIVE_INFINITY };
  }

  encode(s: SiteSnapshot): void {
    const at = SUNGROW.at;
    const c = s.counters;
    this.houseW = s.houseW;
    const batW = sum(s.battery.map((b) => b.w));
    const usable = sum(s.battery.map((b) => b.usableCapacityWh));
    const soc = usable > 0 ? (sum(s.battery.map((b) => b.storedWh)) / usable) * 100 : 0;
    const soh = s.battery.length ? sum(s.battery.map((b) => b.sohPct)) / s.battery.length : 0;
    const running = batW > 0.5 ? SUNGROW.running.CHARGING : batW < -0.5 ? SUNGROW.running.DISCHARGING : 0;
    this.low.write(at.outputKWh, tenthKWh(c.inverterAcDeliveredWh));
    this.low.write(at.dcW, int32LowFirst(sum(s.pvW)));
    this.high.write(at.systemState, [s.relayClosed ? SUNGROW.systemState.RUN : SUNGROW.systemState.OFF_GRID_RUN]);
    this.high.write(at.runningState, [running]);
    this.high.write(at.pvKWh, tenthKWh(sum(c.pvProducedWh)));
    this.high.write(at.loadW, int32LowFirst(s.houseW));
    this.high.write(at.exportW, int32LowFirst(-s.gridW));
    // older firmware sends the magnitude, its direction in the running state
    this.high.write(at.batteryW, [Math.min(0x7fff, Math.round(Math.abs(batW)))]);
    this.high.write(at.socPermille, [Math.round(soc * 10)]);
    this.high.write(at.sohPermille, [Math.round(soh * 10)]);
    this.high.write(at.dischargedKWh, tenthKWh(sum(c.batteryDischargedWh)));
    this.high.write(at.acW, int32LowFirst(s.inverter.acW));
    this.high.write(at.importKWh, tenthKWh(c.gridImportWh));
    this.high.write(at.chargedKWh, tenthKWh(sum(c.batteryChargedWh)));
    this.high.write(at.exportKWh, tenthKWh(c.gridExportWh));
  }
}
