/**
 * The SunSpec devices of the simulated site and how each turns the model's snapshot into its
 * register image. Scale factors are fixed per device at construction (real devices do the same)
 * and chosen so the default site's ranges fit with headroom:
 *   103  A_SF −2, V_SF −1, W_SF 0, Hz_SF −2, VA_SF 0, WH_SF 0, DCA_SF −2, DCV_SF −1, DCW_SF 0, Tmp_SF −1
 *   160  DCA_SF −2, DCV_SF −1, DCW_SF 0, DCWH_SF 0
 *   124  WChaMax_SF 0, MinRsvPct_SF −1, ChaState_SF −1, StorAval_SF −1, InBatV_SF −1
 *   802  AHRtg_SF −1, WHRtg_SF 0 (1 above 65.5 kWh), WChaDisChaMax_SF 0, SoC/DoD/SoH_SF −1,
 *        V_SF −1, CellV_SF −3, A_SF −1, AMax_SF 0, W_SF 0
 *   203  A_SF −2, V_SF −1, Hz_SF −2, W_SF 0, VA_SF 0, TotWh_SF 0 — acc32 Wh holds 4.29 GWh, a
 *        household's ten years (~100 MWh at the very most) many times over
 * Points without a value here keep their not-implemented sentinel (their SF too).
 *
 * Sign conventions in the images (device-side, as SunSpec devices report them):
 *   103 W: AC power delivered by the inverter, + producing (negative only for standby draw);
 *   103 DCW: DC power into the inverter; 160 DCW: ≥ 0 produced by each optimiser;
 *   802 W and A: + DISCHARGING, − charging. Model 802 leaves the sign to the vendor; this is the
 *     convention our SunSpec profile assumes for batteries (generator view, like 103 W);
 *   203 grid meter W: + import from the grid, − export; consumption meter W: + consumed.
 */
import { itemAt } from '../core/item-at.js';
import { METER_EVT, MODEL_1, MODEL_103, MODEL_124, MODEL_160, MODEL_203, MODEL_802 } from '../modbus/sunspec/models.js';
import { MODEL_121, MODEL_123 } from '../modbus/sunspec/models-controls.js';
import { MODEL_702, MODEL_704 } from '../modbus/sunspec/models-der.js';
import type { SimConfig } from './config.js';
import type { SiteSnapshot, StorageWindow } from './model.js';
import { hash01 } from './noise.js';
import { lineVoltages, perPhase, phaseSum } from './phases.js';
import { type LimitModel, PowerLimitSim } from './power-limit.js';
import type { SimRegisters } from './registers.js';
import { Storage124 } from './storage-124.js';
import { type ModelWriter, type PointWriter, SunSpecImage } from './sunspec-encoder.js';

export type SimHost = 'inverter' | 'meter';
export type SimDeviceRole = 'inverter' | 'battery' | 'grid_meter' | 'consumption_meter';

export interface SimDeviceIdentity {
  host: SimHost;
  unitId: number;
  role: SimDeviceRole;
  manufacturer: string;
  model: string;
  serial: string;
  version: string;
  /** battery block index (0-based) for role 'battery' */
  block?: number;
}

export interface SimDevice {
  readonly identity: SimDeviceIdentity;
  readonly registers: SimRegisters;
  encode(s: SiteSnapshot): void;
  /** zero the device's own energy counters from now on (a meter replaced or reset in the field) */
  resetCounters?(s: SiteSnapshot): void;
  /** a master's FC6/FC16 at site time ts; devices without writable registers leave it out (exception 1) */
  write?(address: number, values: readonly number[], ts: number): void;
  /** the battery power window the device's control registers ask for at ts; null = its own logic */
  storageWindow?(ts: number): StorageWindow | null;
  /** the AC output limit the device follows at ts, W; null = none */
  acLimitW?(ts: number): number | null;
}

/** a SunSpec device serves its image as holding registers and has no input registers */
const sunspecRegisters = (image: SunSpecImage): SimRegisters => ({ holding: [image.bank], input: [] });

export const SIM_MANUFACTURER = 'sitegw-sim';
export const SIM_VERSION = '1.0.0';
/** SunSpec timestamps count seconds from 2000-01-01 00:00 UTC */
const SUNSPEC_EPOCH = Date.UTC(2000, 0, 1);

/** model 103 Evt1 bit: the inverter sees no grid */
const INV_EVT_GRID_DISCONNECT = 1 << 4;
const ST = { OFF: 1, SLEEPING: 2, MPPT: 4, THROTTLED: 5 } as const;
const CHA_ST = { EMPTY: 2, DISCHARGING: 3, CHARGING: 4, FULL: 5, HOLDING: 6 } as const;
const BATTERY_STATE_CONNECTED = 3;
const BATTERY_TYPE_LITHIUM_ION = 4;
const LOC_REM_CTL_LOCAL = 1;
const CHA_GRI_SET_PV = 0;

export function serialFor(seed: number, kind: string, n: number): string {
  const h = Math.floor(hash01(seed, 600 + n, kind.length) * 0xffffffff);
  return `${kind}-${h.toString(16).toUpperCase().padStart(8, '0')}`;
}

function writeCommon(m: ModelWriter, id: SimDeviceIdentity): void {
  m.point('Mn').text(id.manufacturer);
  m.point('Md').text(id.model);
  m.point('Vr').text(id.version);
  m.point('SN').text(id.serial);
  m.point('DA').set(id.unitId);
}

/** named points of a model (or of one repeating block), typed by their names so each read is known to exist */
function pointsOf<N extends string>(names: readonly N[], point: (name: N) => PointWriter): Record<N, PointWriter> {
  return Object.fromEntries(names.map((name) => [name, point(name)])) as Record<N, PointWriter>;
}

/** the smallest SF ≥ preferred at which value fits a uint16 */
function fittingSf(value: number, preferred: number): number {
  let sf = preferred;
  while (value / 10 ** sf > 0xfffe) sf++;
  return sf;
}

/** LFP 16s pack: open-circuit voltage from SoC, plus an IR term so charging reads higher */
function packVoltage(socPct: number, chargeW: number): number {
  const ocv = 48 + (6 * socPct) / 100;
  return ocv + (chargeW / ocv) * 0.02;
}

function chargeState(w: number, socPct: number, b: SimConfig['battery']['blocks'][number]): number {
  if (w > 0.5) return CHA_ST.CHARGING;
  if (w < -0.5) return CHA_ST.DISCHARGING;
  if (socPct >= b.socMaxPct - 0.01) return CHA_ST.FULL;
  if (socPct <= b.socMinPct + 0.01) return CHA_ST.EMPTY;
  return CHA_ST.HOLDING;
}

const INVERTER_POINTS = [
  ...['A', 'AphA', 'AphB', 'AphC', 'PPVphAB', 'PPVphBC', 'PPVphCA', 'PhVphA', 'PhVphB', 'PhVphC'],
  ...['W', 'Hz', 'VA', 'WH', 'DCA', 'DCV', 'DCW', 'TmpCab', 'TmpSnk', 'St', 'Evt1', 'Evt2'],
] as const;
const MODULE_POINTS = ['DCW', 'DCV', 'DCA', 'DCWH', 'Tms', 'Tmp', 'DCSt'] as const;
type ModulePoints = Record<(typeof MODULE_POINTS)[number], PointWriter>;

export class InverterDevice implements SimDevice {
  readonly image: SunSpecImage;
  readonly registers: SimRegisters;
  private readonly p: Record<(typeof INVERTER_POINTS)[number], PointWriter>;
  private readonly modules: (ModulePoints & { peakW: number })[];
  private readonly storage: Record<'ChaState' | 'StorAval' | 'InBatV' | 'ChaSt', PointWriter>;
  /** model 124 as a writable control (storage-124.ts) */
  readonly control: Storage124;
  /** models 123 and 704 as the active power limit (power-limit.ts), where the configuration gives them */
  readonly limit: PowerLimitSim | null;

  constructor(
    readonly identity: SimDeviceIdentity,
    private readonly cfg: SimConfig,
    startTs = 0,
  ) {
    const n = cfg.pv.optimisers.length;
    const limits = cfg.inverter.limitModels ?? [];
    // after 124, so the addresses of the models before stay where they were
    this.image = new SunSpecImage([
      { def: MODEL_1 },
      { def: MODEL_103 },
      { def: MODEL_160, repeats: n },
      { def: MODEL_124 },
      ...(limits.includes(123) ? [{ def: MODEL_121 }, { def: MODEL_123 }] : []),
      ...(limits.includes(704) ? [{ def: MODEL_702 }, { def: MODEL_704 }] : []),
    ]);
    this.registers = sunspecRegisters(this.image);
    writeCommon(this.image.model(1), identity);

    const inv = this.image.model(103);
    inv.sf('A_SF', -2).sf('V_SF', -1).sf('W_SF', 0).sf('Hz_SF', -2).sf('VA_SF', 0).sf('WH_SF', 0);
    inv.sf('DCA_SF', -2).sf('DCV_SF', -1).sf('DCW_SF', 0).sf('Tmp_SF', -1);
    this.p = pointsOf(INVERTER_POINTS, (name) => inv.point(name));

    const mppt = this.image.model(160);
    mppt.sf('DCA_SF', -2).sf('DCV_SF', -1).sf('DCW_SF', 0).sf('DCWH_SF', 0);
    mppt.point('Evt').set(0);
    mppt.point('N').set(n);
    this.modules = cfg.pv.optimisers.map(({ peakW }, i) => {
      mppt.blockPoint(i, 'ID').set(i + 1);
      mppt.blockPoint(i, 'IDStr').text(`PV${i + 1}`);
      mppt.blockPoint(i, 'DCEvt').set(0);
      return { ...pointsOf(MODULE_POINTS, (name) => mppt.blockPoint(i, name)), peakW };
    });

    const storage = this.image.model(124);
    storage.sf('WChaMax_SF', 0).sf('MinRsvPct_SF', -1).sf('ChaState_SF', -1).sf('StorAval_SF', -1).sf('InBatV_SF', -1);
    const blocks = cfg.battery.blocks;
    storage.point('WChaMax').set(blocks.reduce((a, b) => a + b.maxChargeW, 0));
    storage.point('MinRsvPct').set(blocks.length ? Math.max(...blocks.map((b) => b.socMinPct)) : 0);
    storage.point('ChaGriSet').set(CHA_GRI_SET_PV);
    this.control = new Storage124(
      storage,
      blocks.reduce((a, b) => a + b.maxChargeW, 0),
    );
    this.limit = limits.length > 0 ? this.limitModels(limits, startTs) : null;
    const sp = (name: string) => storage.point(name);
    this.storage = { ChaState: sp('ChaState'), StorAval: sp('StorAval'), InBatV: sp('InBatV'), ChaSt: sp('ChaSt') };
  }

  write(address: number, values: readonly number[], ts: number): void {
    if (this.limit?.owns(address)) this.limit.write(address, values, ts);
    else this.control.write(address, values, ts);
  }

  storageWindow(ts: number): StorageWindow | null {
    return this.control.window(ts);
  }

  acLimitW(ts: number): number | null {
    return this.limit?.acLimitW(ts) ?? null;
  }

  /** 121 WMax and 702 WMax/WMaxRtg (what the limits are percentages of), the limit's registers */
  private limitModels(models: readonly LimitModel[], startTs: number): PowerLimitSim {
    const rated = this.cfg.inverter.ratedW;
    const controls = new Map<LimitModel, ModelWriter>();
    if (models.includes(123)) {
      const settings = this.image.model(121);
      settings.sf('WMax_SF', 0);
      settings.point('WMax').set(rated);
      controls.set(123, this.image.model(123));
    }
    if (models.includes(704)) {
      const capacity = this.image.model(702);
      capacity.sf('W_SF', 0);
      capacity.point('WMaxRtg').set(rated);
      capacity.point('WMax').set(rated);
      controls.set(704, this.image.model(704));
    }
    return new PowerLimitSim(controls, rated, this.cfg.inverter.limitLagMs ?? 1000, startTs);
  }

  encode(s: SiteSnapshot): void {
    const { p, cfg } = this;
    this.limit?.encode(s.ts);
    const ac = s.inverter.acW;
    const v = s.housePhaseV;
    const phaseA = perPhase(v, (x) => (x > 0 ? Math.abs(ac) / 3 / x : 0));
    p.A.set(phaseSum(phaseA));
    p.AphA.set(phaseA[0]);
    p.AphB.set(phaseA[1]);
    p.AphC.set(phaseA[2]);
    const ll = lineVoltages(v);
    p.PPVphAB.set(ll[0]);
    p.PPVphBC.set(ll[1]);
    p.PPVphCA.set(ll[2]);
    p.PhVphA.set(v[0]);
    p.PhVphB.set(v[1]);
    p.PhVphC.set(v[2]);
    p.W.set(ac);
    p.Hz.set(s.houseHz);
    p.VA.set(Math.abs(ac));
    p.WH.set(s.counters.inverterAcDeliveredWh);
    const dc = s.inverter.dcW;
    const dcV = s.inverter.on ? 380 + 20 * Math.min(1, Math.abs(dc) / cfg.inverter.ratedW) : 0;
    p.DCV.set(dcV);
    p.DCA.set(dcV > 0 ? Math.abs(dc) / dcV : 0);
    p.DCW.set(dc);
    const load = Math.abs(ac) / cfg.inverter.ratedW;
    p.TmpCab.set(25 + 15 * load);
    p.TmpSnk.set(25 + 30 * load);
    p.St.set(!s.inverter.on ? ST.OFF : s.pvCurtailed ? ST.THROTTLED : ac > 0 ? ST.MPPT : ST.SLEEPING);
    p.Evt1.set(s.relayClosed ? 0 : INV_EVT_GRID_DISCONNECT);
    p.Evt2.set(0);

    const tms = Math.floor((s.ts - SUNSPEC_EPOCH) / 1000);
    for (const [i, m] of this.modules.entries()) {
      const w = itemAt(s.pvW, i);
      const frac = Math.min(1, w / m.peakW);
      const dcv = w > 0 ? 330 + 40 * frac : 0;
      m.DCW.set(w);
      m.DCV.set(dcv);
      m.DCA.set(dcv > 0 ? w / dcv : 0);
      m.DCWH.set(itemAt(s.counters.pvProducedWh, i));
      m.Tms.set(tms);
      m.Tmp.set(20 + 30 * frac);
      m.DCSt.set(w > 0 ? (s.pvCurtailed ? ST.THROTTLED : ST.MPPT) : ST.SLEEPING);
    }

    const st = this.storage;
    let stored = 0;
    let usable = 0;
    let avail = 0;
    let net = 0;
    let volts = 0;
    s.battery.forEach((b, j) => {
      stored += b.storedWh;
      usable += b.usableCapacityWh;
      avail += Math.max(0, b.storedWh - (b.usableCapacityWh * itemAt(cfg.battery.blocks, j).socMinPct) / 100);
      net += b.w;
      volts += packVoltage(b.socPct, b.w);
    });
    if (s.battery.length > 0) {
      const soc = (100 * stored) / usable;
      st.ChaState.set(soc);
      st.StorAval.set(avail / cfg.battery.nominalV);
      st.InBatV.set(volts / s.battery.length);
      // aggregate SoC judged against the first block's limits: the blocks of one site share them
      st.ChaSt.set(chargeState(net, soc, itemAt(cfg.battery.blocks, 0)));
    }
  }
}

const BATTERY_POINTS = [
  'SoC',
  'DoD',
  'SoH',
  'NCyc',
  'ChaSt',
  'Hb',
  'V',
  'CellVMax',
  'CellVMin',
  'CellVAvg',
  'A',
  'W',
] as const;

export class BatteryDevice implements SimDevice {
  readonly image: SunSpecImage;
  readonly registers: SimRegisters;
  private readonly p: Record<(typeof BATTERY_POINTS)[number], PointWriter>;
  private readonly blockCfg: SimConfig['battery']['blocks'][number];

  constructor(
    readonly identity: SimDeviceIdentity,
    cfg: SimConfig,
    private readonly block: number,
  ) {
    this.image = new SunSpecImage([{ def: MODEL_1 }, { def: MODEL_802 }]);
    this.registers = sunspecRegisters(this.image);
    writeCommon(this.image.model(1), identity);
    const b = itemAt(cfg.battery.blocks, block);
    this.blockCfg = b;
    const m = this.image.model(802);
    const ah = b.capacityWh / cfg.battery.nominalV;
    m.sf('AHRtg_SF', fittingSf(ah, -1)).sf('WHRtg_SF', fittingSf(b.capacityWh, 0)).sf('WChaDisChaMax_SF', 0);
    m.sf('SoC_SF', -1)
      .sf('DoD_SF', -1)
      .sf('SoH_SF', -1)
      .sf('V_SF', -1)
      .sf('CellV_SF', -3)
      .sf('A_SF', -1)
      .sf('AMax_SF', 0)
      .sf('W_SF', 0);
    m.point('AHRtg').set(ah);
    m.point('WHRtg').set(b.capacityWh);
    m.point('WChaRteMax').set(b.maxChargeW);
    m.point('WDisChaRteMax').set(b.maxDischargeW);
    m.point('SoCMax').set(b.socMaxPct);
    m.point('SoCMin').set(b.socMinPct);
    m.point('LocRemCtl').set(LOC_REM_CTL_LOCAL);
    m.point('AlmRst').set(0);
    m.point('Typ').set(BATTERY_TYPE_LITHIUM_ION);
    m.point('State').set(BATTERY_STATE_CONNECTED);
    for (const e of ['Evt1', 'Evt2', 'EvtVnd1', 'EvtVnd2']) m.point(e).set(0);
    m.point('VMax').set(57.6);
    m.point('VMin').set(44.8);
    m.point('AChaMax').set(b.maxChargeW / 44.8);
    m.point('ADisChaMax').set(b.maxDischargeW / 44.8);
    this.p = pointsOf(BATTERY_POINTS, (name) => m.point(name));
  }

  encode(s: SiteSnapshot): void {
    const b = itemAt(s.battery, this.block);
    const cfgB = this.blockCfg;
    const p = this.p;
    p.SoC.set(b.socPct);
    p.DoD.set(100 - b.socPct);
    p.SoH.set(b.sohPct);
    p.NCyc.set(Math.floor(b.cycles));
    p.ChaSt.set(chargeState(b.w, b.socPct, cfgB));
    p.Hb.set(Math.floor(s.ts / 1000) % 0xffff);
    const v = packVoltage(b.socPct, b.w);
    p.V.set(v);
    const cell = v / 16;
    p.CellVAvg.set(cell);
    p.CellVMax.set(cell + 0.004);
    p.CellVMin.set(cell - 0.004);
    // discharge positive: see the header
    p.A.set(-b.w / v);
    p.W.set(-b.w);
  }
}

const METER_POINTS = [
  ...['A', 'AphA', 'AphB', 'AphC', 'PhV', 'PhVphA', 'PhVphB', 'PhVphC', 'PPV', 'PhVphAB', 'PhVphBC', 'PhVphCA', 'Hz'],
  ...['W', 'WphA', 'WphB', 'WphC', 'VA', 'VAphA', 'VAphB', 'VAphC', 'TotWhExp', 'TotWhImp', 'Evt'],
] as const;

export class MeterDevice implements SimDevice {
  readonly image: SunSpecImage;
  readonly registers: SimRegisters;
  private readonly p: Record<(typeof METER_POINTS)[number], PointWriter>;
  /** what the counters read at their last reset: they count from zero since */
  private base = { imp: 0, exp: 0 };

  constructor(readonly identity: SimDeviceIdentity & { role: 'grid_meter' | 'consumption_meter' }) {
    this.image = new SunSpecImage([{ def: MODEL_1 }, { def: MODEL_203 }]);
    this.registers = sunspecRegisters(this.image);
    writeCommon(this.image.model(1), identity);
    const m = this.image.model(203);
    m.sf('A_SF', -2).sf('V_SF', -1).sf('Hz_SF', -2).sf('W_SF', 0).sf('VA_SF', 0).sf('TotWh_SF', 0);
    this.p = pointsOf(METER_POINTS, (name) => m.point(name));
  }

  encode(s: SiteSnapshot): void {
    const grid = this.identity.role === 'grid_meter';
    const w = grid ? s.gridW : s.houseW;
    const v = grid ? s.gridPhaseV : s.housePhaseV;
    const p = this.p;
    const phW = w / 3;
    const amps = perPhase(v, (x) => (x > 0 ? Math.abs(phW) / x : 0));
    p.A.set(phaseSum(amps));
    p.AphA.set(amps[0]);
    p.AphB.set(amps[1]);
    p.AphC.set(amps[2]);
    p.PhV.set(phaseSum(v) / 3);
    p.PhVphA.set(v[0]);
    p.PhVphB.set(v[1]);
    p.PhVphC.set(v[2]);
    const ll = lineVoltages(v);
    p.PPV.set(phaseSum(ll) / 3);
    p.PhVphAB.set(ll[0]);
    p.PhVphBC.set(ll[1]);
    p.PhVphCA.set(ll[2]);
    p.Hz.set(grid ? s.gridHz : s.houseHz);
    p.W.set(w);
    p.WphA.set(phW);
    p.WphB.set(phW);
    p.WphC.set(phW);
    p.VA.set(Math.abs(w));
    p.VAphA.set(Math.abs(phW));
    p.VAphB.set(Math.abs(phW));
    p.VAphC.set(Math.abs(phW));
    const { imp, exp } = this.counters(s);
    p.TotWhImp.set(imp - this.base.imp);
    p.TotWhExp.set(exp - this.base.exp);
    // no voltage on the measured side: a grid outage (grid meter) or a dark house
    p.Evt.set(v[0] === 0 && v[1] === 0 && v[2] === 0 ? METER_EVT.POWER_FAILURE : 0);
  }

  resetCounters(s: SiteSnapshot): void {
    this.base = this.counters(s);
  }

  private counters(s: SiteSnapshot): { imp: number; exp: number } {
    const grid = this.identity.role === 'grid_meter';
    return {
      imp: grid ? s.counters.gridImportWh : s.counters.houseConsumedWh,
      exp: grid ? s.counters.gridExportWh : 0,
    };
  }
}
