/**
 * The simulated site as the gateway sees it: a physical model plus one register image per
 * Modbus unit, on two hosts (the inverter with its battery BMSs behind it, and the meter box).
 *
 *   inverter host  unit 1        inverter: 1 → 103 → 160 (one module per optimiser) → 124, then
 *                                121 → 123 and 702 → 704 where config.inverter.limitModels names them
 *                  units 2..M+1  battery block j (BMS): 1 → 802
 *                  config.sungrowUnitId (optional)  the same inverter and battery as a Sungrow SH10RT,
 *                                commanded through its EMS registers (sungrow-sh.ts)
 *                  config.huaweiUnitId (optional)  the same inverter as a Huawei SUN2000, limited
 *                                through its 40125 derating (huawei-sun2000.ts)
 *   meter host     unit 1        grid meter at the connection point: 1 → 203, or an Eastron SDM630
 *                                (float32 input registers) with config.gridMeter 'sdm630', or a
 *                                Carlo Gavazzi EM340 (INT32 low word first) with 'em340'
 *                  unit 2        consumption meter on the house feed: 1 → 203
 *
 * The same images serve live polling (through servers.ts) and history pre-fill (update(ts) in a
 * loop over past time, then read the banks in memory).
 */

import { MODBUS_EXCEPTION, ModbusException } from './bank.js';
import { defaultSimConfig, type SimConfig } from './config.js';
import {
  BatteryDevice,
  InverterDevice,
  MeterDevice,
  SIM_MANUFACTURER,
  SIM_VERSION,
  type SimDevice,
  type SimDeviceIdentity,
  type SimHost,
  serialFor,
} from './device-images.js';
import { Em340Meter } from './em340.js';
import { HuaweiSun2000Device } from './huawei-sun2000.js';
import { SiteModel, type SiteSnapshot } from './model.js';
import type { SimRegisters } from './registers.js';
import { Sdm630Meter } from './sdm630.js';
import { SungrowShDevice } from './sungrow-sh.js';

export type { SimDeviceIdentity, SimDeviceRole, SimHost } from './device-images.js';

/** the SDM630's serial is a plain unsigned 32-bit number (holding 0xFC00) */
function sdmSerial(seed: number): number {
  return Number.parseInt(serialFor(seed, 'GM', 0).slice(3), 16) % 100_000_000;
}

type IdentityOf = (
  host: SimHost,
  unitId: number,
  role: SimDeviceIdentity['role'],
  model: string,
  serial: string,
) => SimDeviceIdentity;

/** the device at the grid connection point, of the kind the configuration names */
function gridMeter(cfg: SimConfig, id: IdentityOf): SimDevice {
  switch (cfg.gridMeter) {
    case 'sdm630':
      return new Sdm630Meter(
        { ...id('meter', 1, 'grid_meter', 'SDM630', String(sdmSerial(cfg.seed))), manufacturer: 'Eastron' },
        sdmSerial(cfg.seed),
      );
    case 'em340':
      return new Em340Meter({ ...id('meter', 1, 'grid_meter', 'EM340DINAV23XS1X', ''), manufacturer: 'Carlo Gavazzi' });
    case 'sunspec':
      return new MeterDevice({
        ...id('meter', 1, 'grid_meter', 'EM3-GRID', serialFor(cfg.seed, 'GM', 0)),
        role: 'grid_meter',
      });
  }
}

export class SimSite {
  readonly model: SiteModel;
  readonly devices: readonly SimDevice[];
  private readonly byHost: Record<SimHost, Map<number, SimRegisters>> = { inverter: new Map(), meter: new Map() };
  private encodedAt = Number.NaN;

  constructor(config: SimConfig = defaultSimConfig(), startTs: number = Date.now()) {
    this.model = new SiteModel(config, startTs);
    const cfg = this.model.config;
    const id = (
      host: SimHost,
      unitId: number,
      role: SimDeviceIdentity['role'],
      model: string,
      serial: string,
    ): SimDeviceIdentity => ({
      host,
      unitId,
      role,
      manufacturer: SIM_MANUFACTURER,
      model,
      serial,
      version: SIM_VERSION,
    });
    const devices: SimDevice[] = [
      new InverterDevice(
        id('inverter', 1, 'inverter', `HYB-${cfg.inverter.ratedW}`, serialFor(cfg.seed, 'INV', 0)),
        cfg,
        startTs,
      ),
      ...cfg.battery.blocks.map(
        (b, j) =>
          new BatteryDevice(
            { ...id('inverter', 2 + j, 'battery', `BAT-${b.capacityWh}`, serialFor(cfg.seed, 'BAT', 1 + j)), block: j },
            cfg,
            j,
          ),
      ),
      gridMeter(cfg, id),
      new MeterDevice({
        ...id('meter', 2, 'consumption_meter', 'EM3-LOAD', serialFor(cfg.seed, 'CM', 0)),
        role: 'consumption_meter',
      }),
    ];
    if (cfg.sungrowUnitId !== undefined)
      devices.push(
        new SungrowShDevice(
          {
            ...id('inverter', cfg.sungrowUnitId, 'inverter', 'SH10RT', serialFor(cfg.seed, 'SG', 0)),
            manufacturer: 'Sungrow',
          },
          cfg,
          startTs,
        ),
      );
    if (cfg.huaweiUnitId !== undefined)
      devices.push(
        new HuaweiSun2000Device(
          {
            ...id(
              'inverter',
              cfg.huaweiUnitId,
              'inverter',
              `SUN2000-${Math.round(cfg.inverter.ratedW / 1000)}KTL-M1`,
              serialFor(cfg.seed, 'HV', 0),
            ),
            manufacturer: 'Huawei',
          },
          cfg,
          startTs,
        ),
      );
    this.devices = devices;
    // the first device whose control registers hold a command decides the battery; none: self-consumption
    this.model.storageControl = (ts) => {
      for (const d of devices) {
        const w = d.storageWindow?.(ts);
        if (w) return w;
      }
      return null;
    };
    // the lowest AC output limit any device's registers hold (SunSpec 123/704: power-limit.ts; Huawei 40125)
    this.model.acLimit = (ts) => {
      let w: number | null = null;
      for (const d of devices) {
        const l = d.acLimitW?.(ts) ?? null;
        if (l !== null) w = w === null ? l : Math.min(w, l);
      }
      return w;
    };
    for (const d of devices) this.byHost[d.identity.host].set(d.identity.unitId, d.registers);
    this.encode();
  }

  /** model time, ms since epoch */
  get time(): number {
    return this.model.time;
  }

  get gridOutage(): boolean {
    return this.model.gridOutage;
  }

  /** Bring the model to ts and re-encode every image in place. Earlier times are ignored. */
  update(ts: number): void {
    this.model.advanceTo(ts);
    if (this.model.time !== this.encodedAt) this.encode();
  }

  setGridOutage(on: boolean): void {
    if (on === this.model.gridOutage) return;
    this.model.setGridOutage(on);
    this.encode();
  }

  /** The unit's own energy counters restart from zero (a meter reset); false when it has none to reset. */
  resetCounters(host: SimHost, unitId: number): boolean {
    const d = this.devices.find((x) => x.identity.host === host && x.identity.unitId === unitId);
    if (!d?.resetCounters) return false;
    d.resetCounters(this.model.snapshot());
    this.encode();
    return true;
  }

  snapshot(): SiteSnapshot {
    return this.model.snapshot();
  }

  /**
   * A master's register write to a unit, at the model's time; the flows follow at once. Throws a
   * ModbusException the server answers with: 1 for a unit that takes no writes, 2 for a register
   * that is not writable.
   */
  write(host: SimHost, unitId: number, address: number, values: readonly number[]): void {
    this.writeRequests++;
    const d = this.devices.find((x) => x.identity.host === host && x.identity.unitId === unitId);
    if (!d?.write) throw new ModbusException(MODBUS_EXCEPTION.ILLEGAL_FUNCTION, 'this unit takes no register writes');
    d.write(address, values, this.model.time);
    this.model.refreshFlows();
    this.encode();
  }

  /** register writes that reached any simulated unit, taken or refused (tests prove that none arrived) */
  writeRequests = 0;

  units(host: SimHost): ReadonlyMap<number, SimRegisters> {
    return this.byHost[host];
  }

  unit(host: SimHost, unitId: number): SimRegisters | undefined {
    return this.byHost[host].get(unitId);
  }

  identities(): SimDeviceIdentity[] {
    return this.devices.map((d) => ({ ...d.identity }));
  }

  private encode(): void {
    const s = this.model.snapshot();
    for (const d of this.devices) d.encode(s);
    this.encodedAt = this.model.time;
  }
}
