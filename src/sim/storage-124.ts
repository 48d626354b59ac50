/**
 * SunSpec model 124 (Storage) as a writable control of the simulated hybrid inverter, the way
 * Fronius GEN24 implements it (Fronius "SunSpec Operating Code Description", storage control):
 *
 *   StorCtl_Mod bit 0 CHARGE: battery charge power is at most InWRte % of WChaMax;
 *               bit 1 DISCHARGE: battery discharge power is at most OutWRte % of WChaMax.
 *   A negative rate forces the other direction: OutWRte −40 % with bit 1 set makes the battery
 *   charge at 40 % at least; InWRte = −OutWRte = X with both bits set pins it at X.
 *   InOutWRte_RvrtTms > 0: the rates and StorCtl_Mod revert to 0 (the device's own
 *   self-consumption) that many seconds after the last write to the control block. 0 = never.
 *   ChaGriSet 0 PV: the battery charges from PV only; 1 GRID: from the grid as well.
 *
 * Model 124 points (SunSpec models repository json/model_124.json): WChaMax 0, StorCtl_Mod 3,
 * MinRsvPct 5, OutWRte 10, InWRte 11, InOutWRte_WinTms 12, InOutWRte_RvrtTms 13,
 * InOutWRte_RmpTms 14, ChaGriSet 15, InOutWRte_SF 23 (offsets after the header).
 */
import { MODBUS_EXCEPTION, ModbusException } from './bank.js';
import type { StorageWindow } from './model.js';
import type { ModelWriter } from './sunspec-encoder.js';

/** points a master may write; every other register of the image refuses a write (exception 2) */
const WRITABLE = [
  'StorCtl_Mod',
  'MinRsvPct',
  'OutWRte',
  'InWRte',
  'InOutWRte_WinTms',
  'InOutWRte_RvrtTms',
  'InOutWRte_RmpTms',
  'ChaGriSet',
] as const;
type Writable = (typeof WRITABLE)[number];

export const STOR_CTL = { CHARGE: 1, DISCHARGE: 2 } as const;
/** rates in hundredths of a percent */
export const IN_OUT_W_RTE_SF = -2;

const int16 = (v: number) => (v >= 0x8000 ? v - 0x10000 : v);

export class Storage124 {
  private readonly at = new Map<number, Writable>();
  private readonly raw = new Map<Writable, number>();
  /** site time of the last write to the control block */
  private writtenAt = Number.NaN;
  /** writes that reached the device (tests count them) */
  writes = 0;
  /** site time the revert timer last ended a command (tests read the bound off it) */
  revertedAt: number | undefined;

  constructor(
    private readonly model: ModelWriter,
    private readonly wChaMax: number,
  ) {
    model.sf('InOutWRte_SF', IN_OUT_W_RTE_SF);
    for (const name of WRITABLE) this.at.set(model.point(name).address, name);
    this.set('StorCtl_Mod', 0);
    this.set('OutWRte', 10000);
    this.set('InWRte', 10000);
    this.set('InOutWRte_RvrtTms', 0);
  }

  /** FC16/FC6 to the image: only the control points, all or nothing. */
  write(address: number, values: readonly number[], ts: number): void {
    const names = values.map((_, i) => this.at.get(address + i));
    if (names.some((n) => n === undefined))
      throw new ModbusException(
        MODBUS_EXCEPTION.ILLEGAL_DATA_ADDRESS,
        `registers ${address}..${address + values.length - 1} are not writable storage controls`,
      );
    names.forEach((n, i) => this.set(n!, values[i]!));
    this.writes++;
    this.writtenAt = ts;
  }

  /** The battery power window the registers ask for at ts, or null for the device's own logic (reverting when due). */
  window(ts: number): StorageWindow | null {
    const mod = this.raw.get('StorCtl_Mod') ?? 0;
    const rvrt = this.raw.get('InOutWRte_RvrtTms') ?? 0;
    const until = rvrt > 0 && Number.isFinite(this.writtenAt) ? this.writtenAt + rvrt * 1000 : Number.POSITIVE_INFINITY;
    if (ts >= until && mod !== 0) {
      // the revert timer ran out: back to the device's own logic, as the model says
      this.revertedAt = until;
      this.set('StorCtl_Mod', 0);
      this.set('OutWRte', 10000);
      this.set('InWRte', 10000);
      return null;
    }
    if ((mod & (STOR_CTL.CHARGE | STOR_CTL.DISCHARGE)) === 0) return null;
    const pct = (name: Writable) => (int16(this.raw.get(name) ?? 0) * 10 ** IN_OUT_W_RTE_SF) / 100;
    return {
      hiW: mod & STOR_CTL.CHARGE ? pct('InWRte') * this.wChaMax : Number.POSITIVE_INFINITY,
      loW: mod & STOR_CTL.DISCHARGE ? -pct('OutWRte') * this.wChaMax : Number.NEGATIVE_INFINITY,
      gridCharge: (this.raw.get('ChaGriSet') ?? 0) === 1,
      untilTs: until,
    };
  }

  private set(name: Writable, raw: number): void {
    this.raw.set(name, raw & 0xffff);
    this.model.point(name).setRaw(raw & 0xffff);
  }
}
