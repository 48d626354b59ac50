/**
 * SunSpec model 124 (Storage) as the storage-control capability (src/core/storage-control.ts),
 * written the way Fronius GEN24 reads it (Fronius "Symo GEN24 / Primo GEN24 SunSpec Modbus
 * Interface, Storage control": StorCtl_Mod bit 0 limits charging to InWRte, bit 1 limits
 * discharging to OutWRte, both in % of WChaMax, a negative rate forcing the other direction;
 * InOutWRte_RvrtTms ends the limits after that many seconds). Point offsets and scale factor from
 * the SunSpec models repository, json/model_124.json. evcc's fronius-gen24 template
 * (evcc-io/evcc templates/definition/meter/fronius-gen24.yaml @ 0316f24abba2075c8ff85d4d8f5dbbf2b66dbaf1)
 * drives the same registers with InOutWRte_RvrtTms = 0, so a forced charge outlives evcc; here
 * every command carries a nonzero revert timer, so it ends by itself when the gateway is gone.
 *
 *   self-consumption  StorCtl_Mod 0
 *   hold              InWRte 0, OutWRte 0, StorCtl_Mod 3 (neither direction)
 *   charge P          InWRte = P/WChaMax, OutWRte = −P/WChaMax, ChaGriSet 1, StorCtl_Mod 3 (pinned at P)
 *   discharge P       OutWRte = P/WChaMax, InWRte = −P/WChaMax, StorCtl_Mod 3
 * Order: the rates and the revert timer first (one FC16 over OutWRte..InOutWRte_RvrtTms), then
 * ChaGriSet, then StorCtl_Mod, so the limits never run without their timer.
 */
import type { RegisterReader } from '../core/register-reader.js';
import type {
  CommandLife,
  RegisterWrite,
  RegisterWriter,
  StorageCommand,
  StorageControl,
} from '../core/storage-control.js';
import { ModbusError } from '../modbus/errors.js';
import { type DiscoveredModel, discoverSunSpec } from '../modbus/sunspec/discovery.js';

/** offsets in model 124 after its header (json/model_124.json) */
export const M124 = {
  WChaMax: 0,
  StorCtl_Mod: 3,
  MinRsvPct: 5,
  OutWRte: 10,
  InWRte: 11,
  InOutWRte_WinTms: 12,
  InOutWRte_RvrtTms: 13,
  ChaGriSet: 15,
  WChaMax_SF: 16,
  MinRsvPct_SF: 19,
  InOutWRte_SF: 23,
} as const;
const MIN_LENGTH = 24;
const BOTH = 3;

const int16 = (v: number) => (v >= 0x8000 ? v - 0x10000 : v);
const word = (v: number) => v & 0xffff;

type Bus = RegisterReader & RegisterWriter;

export class SunSpecStorageControl implements StorageControl {
  readonly life: CommandLife;
  private wChaMax = 0;
  private rateSf = 0;
  /** MinRsvPct: the device's own minimum reserve (a percentage, as Fronius reads it) */
  minSocPct: number | undefined;

  constructor(
    readonly unitId: number,
    /** address of model 124's first point */
    readonly address: number,
    revertSeconds: number,
  ) {
    this.life = { kind: 'revert-timer', seconds: revertSeconds };
  }

  /** StorCtl_Mod 0 is self-consumption; everything else release restores (ChaGriSet, the rates, the timers) */
  get selfConsumptionRegisters(): readonly number[] {
    return [this.address + M124.StorCtl_Mod];
  }

  /**
   * ChaGriSet as the installer left it, put back with self-consumption by the executor from the
   * value recorded before the first charge set it (read here after a crash mid-charge, it would
   * be the charge's 1, and grid charging would stay allowed for good)
   */
  get restoredWithSelfConsumption(): readonly number[] {
    return [this.address + M124.ChaGriSet];
  }

  /** Finds model 124 on the unit; undefined when the device has none. */
  static async discover(
    bus: RegisterReader,
    unitId: number,
    revertSeconds: number,
  ): Promise<SunSpecStorageControl | undefined> {
    const map = await discoverSunSpec(bus, unitId);
    const m: DiscoveredModel | undefined = map.models.find((x) => x.id === 124);
    if (!m || m.length < MIN_LENGTH) return undefined;
    return new SunSpecStorageControl(unitId, m.address, revertSeconds);
  }

  async apply(bus: Bus, command: StorageCommand): Promise<RegisterWrite[]> {
    await this.readNameplate(bus);
    const out: RegisterWrite[] = [];
    const a = this.address;
    if (command.mode === 'self-consumption') {
      out.push(...(await this.put(bus, a + M124.StorCtl_Mod, [0], true)));
      return out;
    }
    const pct = command.mode === 'hold' ? 0 : Math.min(1, command.powerW / this.wChaMax);
    const scaled = Math.round((pct * 100) / 10 ** this.rateSf);
    const [inW, outW] =
      command.mode === 'charge' ? [scaled, -scaled] : command.mode === 'discharge' ? [-scaled, scaled] : [0, 0];
    // the rates with the timer in one write: a keep-alive rewrites them, which restarts the timer
    out.push(...(await this.put(bus, a + M124.OutWRte, [word(outW), word(inW), 0, this.life.seconds], true)));
    if (command.mode === 'charge') out.push(...(await this.put(bus, a + M124.ChaGriSet, [1], false)));
    out.push(...(await this.put(bus, a + M124.StorCtl_Mod, [BOTH], false)));
    return out;
  }

  /** WChaMax and the rate scale factor, read once: every rate is a percentage of it. */
  private async readNameplate(bus: Bus): Promise<void> {
    if (this.wChaMax > 0) return;
    const regs = await bus.readHolding(this.unitId, this.address, MIN_LENGTH);
    const sf = int16(regs[M124.WChaMax_SF]!);
    this.wChaMax = regs[M124.WChaMax]! * 10 ** sf;
    this.rateSf = int16(regs[M124.InOutWRte_SF]!);
    const rsvSf = int16(regs[M124.MinRsvPct_SF]!);
    const rsv = regs[M124.MinRsvPct]!;
    // 0xFFFF / 0x8000: not implemented (SunSpec's unimplemented values)
    if (rsv !== 0xffff && rsvSf !== -32768) this.minSocPct = rsv * 10 ** rsvSf;
    if (!(this.wChaMax > 0) || this.rateSf === -32768)
      throw new ModbusError(
        'decode',
        `model 124 on unit ${this.unitId} has no WChaMax or InOutWRte_SF: cannot command rates`,
      );
  }

  /**
   * Writes `values` at `address` unless the device holds them already (`always` for the registers
   * a keep-alive must rewrite), then reads them back. What the device holds, not what was last
   * written: its revert timer puts StorCtl_Mod back to 0 by itself (a keep-alive late under load),
   * and the next command must set it again rather than trust a copy.
   */
  private async put(bus: Bus, address: number, values: number[], always: boolean): Promise<RegisterWrite[]> {
    if (!always) {
      const held = await bus.readHolding(this.unitId, address, values.length);
      if (values.every((v, i) => held[i] === v)) return [];
    }
    await bus.writeHolding(this.unitId, address, values);
    const readBack = await bus.readHolding(this.unitId, address, values.length);
    return [{ address, values, readBack }];
  }
}
