/**
 * An Eastron SDM630 three-phase meter at the grid connection point, as its register document
 * describes it: Eastron "SDM630 Modbus Protocol" (V2.0, the "MODBUS Protocol" chapter of the
 * SDM630-Modbus V2 user manual, B+G e-tech / www.eastron-germany.de).
 *
 * - Measurements are 3X input registers (FC4), each an IEEE 754 float32 in two registers, high
 *   word first. Start addresses as the document's "Modbus Protocol Start Address Hex" column:
 *   30001 phase 1 L-N volts = 0x0000, 30053 total system power = 0x0034, 30071 frequency =
 *   0x0046, 30073/30075 total import/export kWh = 0x0048/0x004A, 30201 L1-L2 volts = 0x00C8,
 *   30225 neutral current = 0x00E0, 30343 total kWh = 0x0156. Parameters the document does not
 *   list in 0x0000..0x017F read as 0, so block reads across small gaps work as on the meter.
 * - Settings are 4X holding registers (FC3), also float32: 40003 demand period = 0x0002 (60 min),
 *   40011 system type = 0x000A (3 = 3 phase 4 wire), 40019 parity/stop = 0x0012, 40021 Modbus
 *   address = 0x0014, 40029 baud rate = 0x001C (2 = 9600); 464513 serial number = 0xFC00,
 *   unsigned int32.
 * - Signs: power is import − export at the meter (the document's demand note), so + import,
 *   − export; power factor is signed by the direction of the current.
 * During a grid outage the meter's side of the relay carries no voltage: volts, currents,
 * power and frequency read 0; the energy registers keep their totals.
 */
import { RegisterBank } from './bank.js';
import type { SimDevice, SimDeviceIdentity } from './device-images.js';
import type { SiteSnapshot } from './model.js';
import { lineVoltages, PHASES, perPhase, phaseSum } from './phases.js';
import type { SimRegisters } from './registers.js';

export const SDM630 = {
  input: { start: 0x0000, length: 0x0180 },
  setup: { start: 0x0000, length: 0x0040 },
  serial: { start: 0xfc00, length: 2 },
  /** input register start addresses of the parameters the simulator fills */
  at: {
    phaseV: [0x0000, 0x0002, 0x0004],
    phaseA: [0x0006, 0x0008, 0x000a],
    phaseW: [0x000c, 0x000e, 0x0010],
    phaseVA: [0x0012, 0x0014, 0x0016],
    phaseVAr: [0x0018, 0x001a, 0x001c],
    phasePF: [0x001e, 0x0020, 0x0022],
    phaseAngle: [0x0024, 0x0026, 0x0028],
    avgV: 0x002a,
    avgA: 0x002e,
    sumA: 0x0030,
    totalW: 0x0034,
    totalVA: 0x0038,
    totalVAr: 0x003c,
    totalPF: 0x003e,
    totalAngle: 0x0042,
    hz: 0x0046,
    importKWh: 0x0048,
    exportKWh: 0x004a,
    lineV: [0x00c8, 0x00ca, 0x00cc],
    avgLineV: 0x00ce,
    neutralA: 0x00e0,
    totalKWh: 0x0156,
  },
  /** holding register start addresses of the settings */
  setupAt: { demandPeriod: 0x0002, systemType: 0x000a, parityStop: 0x0012, address: 0x0014, baudRate: 0x001c },
} as const;

/** a float32 as two registers, high word first */
export function f32Words(value: number): [number, number] {
  const b = Buffer.alloc(4);
  b.writeFloatBE(value);
  return [b.readUInt16BE(0), b.readUInt16BE(2)];
}

export class Sdm630Meter implements SimDevice {
  readonly registers: SimRegisters;
  private readonly input: RegisterBank;

  constructor(
    readonly identity: SimDeviceIdentity,
    serialNumber: number,
  ) {
    this.input = new RegisterBank(SDM630.input.start, SDM630.input.length);
    const setup = new RegisterBank(SDM630.setup.start, SDM630.setup.length);
    const put = (bank: RegisterBank, addr: number, v: number) => bank.write(addr, f32Words(v));
    put(setup, SDM630.setupAt.demandPeriod, 60);
    put(setup, SDM630.setupAt.systemType, 3);
    put(setup, SDM630.setupAt.parityStop, 0);
    put(setup, SDM630.setupAt.address, identity.unitId);
    put(setup, SDM630.setupAt.baudRate, 2);
    const serial = new RegisterBank(SDM630.serial.start, SDM630.serial.length);
    serial.write(SDM630.serial.start, [Math.floor(serialNumber / 0x10000) & 0xffff, serialNumber & 0xffff]);
    this.registers = { holding: [setup, serial], input: [this.input] };
  }

  encode(s: SiteSnapshot): void {
    const at = SDM630.at;
    const put = (addr: number, v: number) => this.input.write(addr, f32Words(v));
    const v = s.gridPhaseV;
    const live = v.some((x) => x > 0);
    const phaseW = live ? s.gridW / 3 : 0;
    const amps = perPhase(v, (x) => (x > 0 ? Math.abs(phaseW) / x : 0));
    const pf = phaseW < 0 ? -1 : 1;
    for (const p of PHASES) {
      put(at.phaseV[p], v[p]);
      put(at.phaseA[p], amps[p]);
      put(at.phaseW[p], phaseW);
      put(at.phaseVA[p], Math.abs(phaseW));
      put(at.phaseVAr[p], 0);
      put(at.phasePF[p], live ? pf : 0);
      put(at.phaseAngle[p], live && phaseW < 0 ? 180 : 0);
    }
    put(at.avgV, phaseSum(v) / 3);
    put(at.avgA, phaseSum(amps) / 3);
    put(at.sumA, phaseSum(amps));
    put(at.totalW, live ? s.gridW : 0);
    put(at.totalVA, live ? Math.abs(s.gridW) : 0);
    put(at.totalVAr, 0);
    put(at.totalPF, live ? pf : 0);
    put(at.totalAngle, live && s.gridW < 0 ? 180 : 0);
    put(at.hz, live ? s.gridHz : 0);
    const importKWh = s.counters.gridImportWh / 1000;
    const exportKWh = s.counters.gridExportWh / 1000;
    put(at.importKWh, importKWh);
    put(at.exportKWh, exportKWh);
    const ll = lineVoltages(v);
    for (const p of PHASES) put(at.lineV[p], ll[p]);
    put(at.avgLineV, phaseSum(ll) / 3);
    // balanced phases: no neutral current
    put(at.neutralA, 0);
    put(at.totalKWh, importKWh + exportKWh);
  }
}
