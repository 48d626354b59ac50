/**
 * A Carlo Gavazzi EM340 three-phase meter at the grid connection point, as the EM330 / EM340
 * communication protocol lays out its registers (device-profiles/carlo-gavazzi-em.yaml cites the
 * sources): an RS-485 meter, so the simulator's way to put one of the newer profile families on
 * an RTU line.
 *
 * - Function 3 and 4 read the same registers; this image is served as holding registers, the
 *   function the profile uses.
 * - Measurements are INT32 with the LOW word first: volts and watts x 10, energy in kWh x 10.
 *   0x0000/0x0002/0x0004 V L1..L3-N, 0x0028 W sys, 0x0033 Hz x 10 (INT16), 0x0034 kWh (+) TOT,
 *   0x004E kWh (-) TOT; 0x000B the identification code (341, EM340DINAV23XS1X).
 * - Sign in measurement mode B: W sys + import, - export.
 * During a grid outage the meter's side carries no voltage: volts, power and frequency read 0;
 * the energy registers keep their totals.
 */
import { RegisterBank } from './bank.js';
import type { SimDevice, SimDeviceIdentity } from './device-images.js';
import type { SiteSnapshot } from './model.js';
import { PHASES } from './phases.js';
import type { SimRegisters } from './registers.js';

export const EM340 = {
  length: 0x0060,
  idCode: 341,
  at: {
    phaseV: [0x0000, 0x0002, 0x0004],
    idCode: 0x000b,
    totalW: 0x0028,
    hz: 0x0033,
    importKWh: 0x0034,
    exportKWh: 0x004e,
  },
} as const;

/** an INT32 as two registers, low word first */
export function int32LowFirst(value: number): [number, number] {
  const v = Math.round(value) >>> 0;
  return [v & 0xffff, v >>> 16];
}

export class Em340Meter implements SimDevice {
  readonly registers: SimRegisters;
  private readonly bank: RegisterBank;

  constructor(readonly identity: SimDeviceIdentity) {
    this.bank = new RegisterBank(0, EM340.length);
    this.bank.write(EM340.at.idCode, [EM340.idCode]);
    this.registers = { holding: [this.bank], input: [] };
  }

  encode(s: SiteSnapshot): void {
    const at = EM340.at;
    const put = (addr: number, v: number) => this.bank.write(addr, int32LowFirst(v));
    const live = s.gridPhaseV.some((x) => x > 0);
    for (const p of PHASES) put(at.phaseV[p], s.gridPhaseV[p] * 10);
    put(at.totalW, live ? s.gridW * 10 : 0);
    this.bank.write(at.hz, [live ? Math.round(s.gridHz * 10) : 0]);
    // the meter counts in 0.1 kWh steps
    put(at.importKWh, Math.floor(s.counters.gridImportWh / 100));
    put(at.exportKWh, Math.floor(s.counters.gridExportWh / 100));
  }
}
