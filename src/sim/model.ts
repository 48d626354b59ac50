/**
 * The physics of the simulated site, pure and steppable: PV optimisers and battery blocks on the
 * DC bus of one hybrid inverter, the inverter's AC side, the house and the grid connection on
 * the AC bus. No I/O and no clock: the owner calls advanceTo(ts) with whatever time it lives in.
 *
 * Signs here are the physical ones the register images need, not the gateway's channel signs:
 *   pvW ≥ 0 produced · battery W + charging · inverter dcW + into the inverter from the DC bus,
 *   acW + delivered to the AC bus · gridW + import · houseW ≥ 0 consumed.
 * Balances, at every instant (and so for every counter):
 *   DC bus: Σ pvW − Σ batteryW = inverter dcW
 *   inverter: acW = dcW·η − standby (dcW ≥ 0), dcW/η − standby (dcW < 0)
 *   AC bus: gridW + inverter acW = houseW
 * Dispatch is self-consumption: PV serves the house, surplus charges the battery, the battery
 * covers a deficit, the grid takes or gives the rest. An AC output limit (SunSpec 123/704 on the
 * inverter) curtails PV, then a discharge, so the grid meter reads the house minus the limited output. With the relay open the grid term is 0:
 * PV is curtailed when nothing can take it, and the house is shed to what PV + battery supply.
 */
import { itemAt } from '../core/item-at.js';
import { type BatteryBlockConfig, type SimConfig, validateSimConfig } from './config.js';
import { HouseLoad } from './house-load.js';
import { InverterConversion } from './inverter-efficiency.js';
import { hash01, valueNoise } from './noise.js';
import { PvArray } from './pv-array.js';

export type { BatteryBlockConfig, OptimiserConfig, SimConfig } from './config.js';
export { defaultSimConfig, SimConfigError, validateSimConfig } from './config.js';

const HOUR = 3_600_000;

/** lifetime energy per flow, Wh; they only grow */
export interface SiteCounters {
  pvProducedWh: number[];
  batteryChargedWh: number[];
  batteryDischargedWh: number[];
  inverterDcInWh: number;
  inverterDcOutWh: number;
  inverterAcDeliveredWh: number;
  inverterAcAbsorbedWh: number;
  gridImportWh: number;
  gridExportWh: number;
  houseConsumedWh: number;
}

export interface BatterySnapshot {
  /** + charging (into the battery), DC at the terminals */
  w: number;
  socPct: number;
  sohPct: number;
  /** energy stored now, Wh */
  storedWh: number;
  /** nameplate × SoH: what SoC is a percentage of */
  usableCapacityWh: number;
  /** equivalent full cycles, lifetime */
  cycles: number;
}

export interface SiteSnapshot {
  ts: number;
  relayClosed: boolean;
  /** per optimiser, delivered to the DC bus (after any curtailment), ≥ 0 */
  pvW: number[];
  /** per optimiser, what the maximum power point would give */
  pvAvailableW: number[];
  pvCurtailed: boolean;
  battery: BatterySnapshot[];
  inverter: {
    /** + delivered to the AC bus */
    acW: number;
    /** + taken from the DC bus */
    dcW: number;
    /** false only when islanded with nothing to run on */
    on: boolean;
  };
  /** + import */
  gridW: number;
  /** what the house draws now (after shedding) */
  houseW: number;
  /** what the house would draw */
  houseDemandW: number;
  /** per phase, measured at the connection point on the grid side; 0 while the relay is open */
  gridPhaseV: [number, number, number];
  gridHz: number;
  /** per phase on the house side: grid when closed, the inverter's island when open, 0 in a blackout */
  housePhaseV: [number, number, number];
  houseHz: number;
  counters: SiteCounters;
}

/**
 * A storage command in force (sim/storage-124.ts): total battery power (+ charging) is kept in
 * [loW, hiW] within what the blocks can take or give; `gridCharge` false limits charging to PV.
 */
export interface StorageWindow {
  loW: number;
  hiW: number;
  gridCharge: boolean;
  /** site time the command reverts at (the device's revert timer) */
  untilTs: number;
}

/** one battery block: its fixed limits, its state, and this step's flow and caps */
interface BlockState {
  readonly cfg: BatteryBlockConfig;
  readonly soh: number;
  readonly usable: number;
  readonly eMin: number;
  readonly eMax: number;
  readonly cyclesAtStart: number;
  stored: number;
  chCap: number;
  disCap: number;
  /** + charging */
  w: number;
  chargedWh: number;
  dischargedWh: number;
}

export class SiteModel {
  readonly config: SimConfig;
  readonly conversion: InverterConversion;
  private readonly pv: PvArray;
  private readonly house: HouseLoad;
  private t: number;
  private outage = false;

  // exogenous inputs for the current step
  private exoTs = Number.NaN;
  private readonly pvAvail: Float64Array;
  private pvAvailSum = 0;
  private demand = 0;

  // flows in effect now
  private readonly pvW: Float64Array;
  private dcW = 0;
  private acW = 0;
  private gridW = 0;
  private houseW = 0;
  private inverterOn = true;
  private curtailed = false;

  private readonly blocks: BlockState[];
  private readonly dcAtRated: number;
  /** the storage command in force at a time, if any (the inverter's control registers) */
  storageControl: ((ts: number) => StorageWindow | null) | null = null;
  /** the inverter's AC output limit at a time, W, if any (its SunSpec 123/704 registers) */
  acLimit: ((ts: number) => number | null) | null = null;

  private readonly c: {
    pv: Float64Array;
    dcIn: number;
    dcOut: number;
    acDelivered: number;
    acAbsorbed: number;
    gridImport: number;
    gridExport: number;
    house: number;
  };

  constructor(config: SimConfig, startTs: number) {
    validateSimConfig(config);
    if (!Number.isFinite(startTs)) throw new RangeError(`start time must be finite, got ${startTs}`);
    this.config = structuredClone(config);
    const cfg = this.config;
    this.t = startTs;
    this.conversion = new InverterConversion(cfg.inverter.ratedW, cfg.inverter.standbyW, cfg.inverter.efficiencyCurve);
    this.dcAtRated = this.conversion.dcForAc(cfg.inverter.ratedW);
    this.pv = new PvArray(cfg.pv, cfg.location, cfg.weather, cfg.seed);
    this.house = new HouseLoad(cfg.house, cfg.seed, cfg.location.timezone);
    const n = this.pv.count;
    this.pvAvail = new Float64Array(n);
    this.pvW = new Float64Array(n);
    this.blocks = cfg.battery.blocks.map((b, j) => {
      // a site that has been running a while: slightly aged, unequal blocks
      const soh = 96 + 3.5 * hash01(cfg.seed, 500, j);
      const usable = (b.capacityWh * soh) / 100;
      return {
        cfg: b,
        soh,
        usable,
        eMin: (usable * b.socMinPct) / 100,
        eMax: (usable * b.socMaxPct) / 100,
        cyclesAtStart: Math.round((100 - soh) * 80),
        stored: (usable * b.initialSocPct) / 100,
        chCap: 0,
        disCap: 0,
        w: 0,
        chargedWh: 0,
        dischargedWh: 0,
      };
    });
    this.c = {
      pv: new Float64Array(n),
      dcIn: 0,
      dcOut: 0,
      acDelivered: 0,
      acAbsorbed: 0,
      gridImport: 0,
      gridExport: 0,
      house: 0,
    };
    this.refresh();
  }

  /** model time, ms since epoch */
  get time(): number {
    return this.t;
  }

  get gridOutage(): boolean {
    return this.outage;
  }

  /** Open (true) or close the grid relay; flows switch at once, the counters keep going. */
  setGridOutage(on: boolean): void {
    if (on === this.outage) return;
    this.outage = on;
    this.refresh();
  }

  /**
   * Integrate up to ts. Steps sit on multiples of stepMs since the epoch and each takes its inputs
   * at the step's start, so the result does not depend on how a span is chopped into calls.
   * A ts at or before the model time is ignored: time does not run backwards.
   */
  advanceTo(ts: number): void {
    const step = this.config.stepMs;
    while (this.t < ts) {
      const stepStart = Math.floor(this.t / step) * step;
      const segEnd = Math.min(stepStart + step, ts);
      const dtH = (segEnd - this.t) / HOUR;
      this.loadInputs(stepStart);
      this.dispatch(dtH);
      this.integrate(dtH);
      this.t = segEnd;
    }
  }

  snapshot(): SiteSnapshot {
    const cfg = this.config;
    const closed = !this.outage;
    const gridV = closed ? this.gridVoltages(this.t) : ([0, 0, 0] as [number, number, number]);
    const gridHz = closed ? 50 + 0.03 * (2 * valueNoise(cfg.seed, 410, this.t / 20_000) - 1) : 0;
    const islandLive = !closed && this.inverterOn;
    const houseV: [number, number, number] = closed ? [...gridV] : islandLive ? [230, 230, 230] : [0, 0, 0];
    return {
      ts: this.t,
      relayClosed: closed,
      pvW: Array.from(this.pvW),
      pvAvailableW: Array.from(this.pvAvail),
      pvCurtailed: this.curtailed,
      battery: this.blocks.map((k) => ({
        w: k.w,
        socPct: (100 * k.stored) / k.usable,
        sohPct: k.soh,
        storedWh: k.stored,
        usableCapacityWh: k.usable,
        cycles: k.cyclesAtStart + k.dischargedWh / k.cfg.capacityWh,
      })),
      inverter: { acW: this.acW, dcW: this.dcW, on: this.inverterOn },
      gridW: this.gridW,
      houseW: this.houseW,
      houseDemandW: this.demand,
      gridPhaseV: gridV,
      gridHz,
      housePhaseV: houseV,
      houseHz: closed ? gridHz : islandLive ? 50 : 0,
      counters: {
        pvProducedWh: Array.from(this.c.pv),
        batteryChargedWh: this.blocks.map((k) => k.chargedWh),
        batteryDischargedWh: this.blocks.map((k) => k.dischargedWh),
        inverterDcInWh: this.c.dcIn,
        inverterDcOutWh: this.c.dcOut,
        inverterAcDeliveredWh: this.c.acDelivered,
        inverterAcAbsorbedWh: this.c.acAbsorbed,
        gridImportWh: this.c.gridImport,
        gridExportWh: this.c.gridExport,
        houseConsumedWh: this.c.house,
      },
    };
  }

  /** flows for the current instant without moving time (a storage command written) */
  refreshFlows(): void {
    this.refresh();
  }

  /** flows for the current instant without moving time (start, relay switched) */
  private refresh(): void {
    const step = this.config.stepMs;
    this.loadInputs(Math.floor(this.t / step) * step);
    this.dispatch(step / HOUR);
  }

  private loadInputs(ts: number): void {
    if (ts === this.exoTs) return;
    this.exoTs = ts;
    this.pvAvailSum = this.pv.availableW(ts, this.pvAvail);
    this.demand = this.house.demandW(ts);
  }

  private dispatch(dtH: number): void {
    let chargeCap = 0;
    let dischargeCap = 0;
    for (const k of this.blocks) {
      const b = k.cfg;
      // never step past socMax / socMin: the limit lands exactly on the bound
      k.chCap = Math.min(b.maxChargeW, Math.max(0, (k.eMax - k.stored) / (b.chargeEfficiency * dtH)));
      k.disCap = Math.min(b.maxDischargeW, Math.max(0, ((k.stored - k.eMin) * b.dischargeEfficiency) / dtH));
      chargeCap += k.chCap;
      dischargeCap += k.disCap;
    }
    const inv = this.conversion;
    const closed = !this.outage;
    const demand = this.demand;
    const avail = this.pvAvailSum;
    const dcNeed = Math.min(inv.dcForAc(demand), this.dcAtRated);
    let pvUse = avail;
    let bat = 0;
    let on = true;
    const win = closed ? this.storageControl?.(this.t) : null;
    if (win) {
      // commanded: self-consumption's choice clipped to the window, the grid takes the difference
      const own = avail >= dcNeed ? avail - dcNeed : -(dcNeed - avail);
      const hi = Math.min(win.hiW, chargeCap, win.gridCharge ? Number.POSITIVE_INFINITY : Math.max(0, avail - dcNeed));
      const lo = Math.max(win.loW, -dischargeCap);
      bat = Math.max(Math.min(own, hi), Math.min(lo, hi));
      // the inverter converts at most its rating either way
      bat = Math.max(bat, -this.dcAtRated);
      pvUse = Math.min(avail, this.dcAtRated + bat);
    } else if (avail >= dcNeed) {
      bat = Math.min(avail - dcNeed, chargeCap);
      // connected: the rest is exported up to the rating; islanded: nowhere to go, curtail
      pvUse = closed ? Math.min(avail, this.dcAtRated + bat) : dcNeed + bat;
    } else {
      bat = -Math.min(dcNeed - avail, dischargeCap);
      if (!closed && inv.acFromDc(avail - bat) <= 0) {
        // islanded with too little to even run the inverter: it stops, the house goes dark
        on = false;
        pvUse = 0;
        bat = 0;
      }
    }

    const limit = closed && on ? this.acLimit?.(this.t) : null;
    if (limit !== null && limit !== undefined) {
      // the AC output held at the limit: PV is curtailed first, a discharge after it; the battery
      // still charges from PV on the DC side
      const capDc = inv.dcForAc(Math.max(0, limit));
      if (pvUse - bat > capDc) {
        pvUse = Math.max(0, Math.min(pvUse, capDc + bat));
        if (pvUse - bat > capDc) bat = pvUse - capDc;
      }
    }
    let pvSum = 0;
    const k = avail > 0 ? pvUse / avail : 0;
    this.pvAvail.forEach((a, i) => {
      const w = a * k;
      this.pvW[i] = w;
      pvSum += w;
    });
    let batSum = 0;
    for (const b of this.blocks) {
      // shares in proportion to what each block can take or give, so none exceeds its limit
      const w = bat > 0 ? (bat * b.chCap) / chargeCap : bat < 0 ? (bat * b.disCap) / dischargeCap : 0;
      b.w = w;
      batSum += w;
    }
    this.curtailed = pvSum < avail - 1e-6;
    this.inverterOn = on;
    this.dcW = pvSum - batSum;
    this.acW = on ? inv.acFromDc(this.dcW) : 0;
    if (closed) {
      this.houseW = demand;
      this.gridW = demand - this.acW;
    } else {
      this.houseW = this.acW;
      this.gridW = 0;
    }
  }

  private integrate(dtH: number): void {
    const c = this.c;
    this.pvW.forEach((w, i) => {
      c.pv[i] = itemAt(c.pv, i) + w * dtH;
    });
    for (const b of this.blocks) {
      const { w, stored: e } = b;
      if (w > 0) {
        b.chargedWh += w * dtH;
        b.stored = Math.min(e + w * b.cfg.chargeEfficiency * dtH, Math.max(b.eMax, e));
      } else if (w < 0) {
        b.dischargedWh -= w * dtH;
        b.stored = Math.max(e + (w / b.cfg.dischargeEfficiency) * dtH, Math.min(b.eMin, e));
      }
    }
    if (this.dcW >= 0) c.dcIn += this.dcW * dtH;
    else c.dcOut -= this.dcW * dtH;
    if (this.acW >= 0) c.acDelivered += this.acW * dtH;
    else c.acAbsorbed -= this.acW * dtH;
    if (this.gridW >= 0) c.gridImport += this.gridW * dtH;
    else c.gridExport -= this.gridW * dtH;
    c.house += this.houseW * dtH;
  }

  private gridVoltages(ts: number): [number, number, number] {
    const s = this.config.seed;
    const v = (ph: number) => 230 + 4 * (2 * valueNoise(s, 400 + ph, ts / 300_000) - 1);
    return [v(0), v(1), v(2)];
  }
}
