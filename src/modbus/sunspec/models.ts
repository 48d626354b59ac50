/**
 * SunSpec information models used by the gateway and the simulator: point order, type, size and
 * scale-factor reference, as published in the SunSpec models repository (json/model_<id>.json,
 * github.com/sunspec/models) and the SunSpec Information Model Reference. Offsets are derived
 * from the order; they are counted from the first register after the model's ID and L header.
 *
 * Only the layouts are written here; how a point becomes a spec channel lives in the profile
 * mapping (src/profiles/sunspec.ts), so adding a model is adding data.
 */
export type PointType =
  | 'uint16'
  | 'int16'
  | 'uint32'
  | 'int32'
  | 'acc16'
  | 'acc32'
  | 'enum16'
  | 'bitfield16'
  | 'bitfield32'
  | 'sunssf'
  | 'string'
  | 'pad';

export interface PointDef {
  name: string;
  type: PointType;
  /** registers */
  size: number;
  /** name of the scale-factor point in the same model */
  sf?: string;
  units?: string;
}

export interface ModelDef {
  id: number;
  name: string;
  fixed: PointDef[];
  /** repeating block (e.g. MPPT modules of model 160); count = (L - fixed length) / block length */
  repeating?: PointDef[];
}

const SIZE: Record<PointType, number> = {
  uint16: 1,
  int16: 1,
  uint32: 2,
  int32: 2,
  acc16: 1,
  acc32: 2,
  enum16: 1,
  bitfield16: 1,
  bitfield32: 2,
  sunssf: 1,
  string: 0,
  pad: 1,
};

/** compact point constructor: p(name, type, sf?, units?) ; strings: s(name, registers) */
function p(name: string, type: PointType, sf?: string, units?: string): PointDef {
  return { name, type, size: SIZE[type], ...(sf ? { sf } : {}), ...(units ? { units } : {}) };
}
function s(name: string, size: number): PointDef {
  return { name, type: 'string', size };
}
/** a total and its three per-phase points: X, XphA, XphB, XphC (energy points spell it XPhA) */
function phases(name: string, type: PointType, sf: string, units: string, ph = 'ph'): PointDef[] {
  return [p(name, type, sf, units), ...['A', 'B', 'C'].map((x) => p(`${name}${ph}${x}`, type, sf, units))];
}

export const MODEL_1: ModelDef = {
  id: 1,
  name: 'common',
  fixed: [s('Mn', 16), s('Md', 16), s('Opt', 8), s('Vr', 8), s('SN', 16), p('DA', 'uint16'), p('Pad', 'pad')],
};

/** 101/102/103 share one layout; 101 and 102 use uint16 currents/voltages, 103 too (int16 only for W etc.) */
function inverterIntegerModel(id: number, name: string): ModelDef {
  return {
    id,
    name,
    fixed: [
      ...phases('A', 'uint16', 'A_SF', 'A'),
      p('A_SF', 'sunssf'),
      p('PPVphAB', 'uint16', 'V_SF', 'V'),
      p('PPVphBC', 'uint16', 'V_SF', 'V'),
      p('PPVphCA', 'uint16', 'V_SF', 'V'),
      p('PhVphA', 'uint16', 'V_SF', 'V'),
      p('PhVphB', 'uint16', 'V_SF', 'V'),
      p('PhVphC', 'uint16', 'V_SF', 'V'),
      p('V_SF', 'sunssf'),
      p('W', 'int16', 'W_SF', 'W'),
      p('W_SF', 'sunssf'),
      p('Hz', 'uint16', 'Hz_SF', 'Hz'),
      p('Hz_SF', 'sunssf'),
      p('VA', 'int16', 'VA_SF', 'VA'),
      p('VA_SF', 'sunssf'),
      p('VAr', 'int16', 'VAr_SF', 'var'),
      p('VAr_SF', 'sunssf'),
      p('PF', 'int16', 'PF_SF', 'Pct'),
      p('PF_SF', 'sunssf'),
      p('WH', 'acc32', 'WH_SF', 'Wh'),
      p('WH_SF', 'sunssf'),
      p('DCA', 'uint16', 'DCA_SF', 'A'),
      p('DCA_SF', 'sunssf'),
      p('DCV', 'uint16', 'DCV_SF', 'V'),
      p('DCV_SF', 'sunssf'),
      p('DCW', 'int16', 'DCW_SF', 'W'),
      p('DCW_SF', 'sunssf'),
      p('TmpCab', 'int16', 'Tmp_SF', 'C'),
      p('TmpSnk', 'int16', 'Tmp_SF', 'C'),
      p('TmpTrns', 'int16', 'Tmp_SF', 'C'),
      p('TmpOt', 'int16', 'Tmp_SF', 'C'),
      p('Tmp_SF', 'sunssf'),
      p('St', 'enum16'),
      p('StVnd', 'enum16'),
      p('Evt1', 'bitfield32'),
      p('Evt2', 'bitfield32'),
      p('EvtVnd1', 'bitfield32'),
      p('EvtVnd2', 'bitfield32'),
      p('EvtVnd3', 'bitfield32'),
      p('EvtVnd4', 'bitfield32'),
    ],
  };
}
export const MODEL_101 = inverterIntegerModel(101, 'inverter_single_phase');
export const MODEL_102 = inverterIntegerModel(102, 'inverter_split_phase');
export const MODEL_103 = inverterIntegerModel(103, 'inverter_three_phase');

export const MODEL_124: ModelDef = {
  id: 124,
  name: 'storage',
  fixed: [
    p('WChaMax', 'uint16', 'WChaMax_SF', 'W'),
    p('WChaGra', 'uint16', 'WChaDisChaGra_SF', '% WChaMax/sec'),
    p('WDisChaGra', 'uint16', 'WChaDisChaGra_SF', '% WChaMax/sec'),
    p('StorCtl_Mod', 'bitfield16'),
    p('VAChaMax', 'uint16', 'VAChaMax_SF', 'VA'),
    p('MinRsvPct', 'uint16', 'MinRsvPct_SF', '% WChaMax'),
    p('ChaState', 'uint16', 'ChaState_SF', '% AhrRtg'),
    p('StorAval', 'uint16', 'StorAval_SF', 'AH'),
    p('InBatV', 'uint16', 'InBatV_SF', 'V'),
    p('ChaSt', 'enum16'),
    p('OutWRte', 'int16', 'InOutWRte_SF', '% WDisChaMax'),
    p('InWRte', 'int16', 'InOutWRte_SF', '% WChaMax'),
    p('InOutWRte_WinTms', 'uint16'),
    p('InOutWRte_RvrtTms', 'uint16'),
    p('InOutWRte_RmpTms', 'uint16'),
    p('ChaGriSet', 'enum16'),
    p('WChaMax_SF', 'sunssf'),
    p('WChaDisChaGra_SF', 'sunssf'),
    p('VAChaMax_SF', 'sunssf'),
    p('MinRsvPct_SF', 'sunssf'),
    p('ChaState_SF', 'sunssf'),
    p('StorAval_SF', 'sunssf'),
    p('InBatV_SF', 'sunssf'),
    p('InOutWRte_SF', 'sunssf'),
  ],
};

export const MODEL_160: ModelDef = {
  id: 160,
  name: 'mppt',
  fixed: [
    p('DCA_SF', 'sunssf'),
    p('DCV_SF', 'sunssf'),
    p('DCW_SF', 'sunssf'),
    p('DCWH_SF', 'sunssf'),
    p('Evt', 'bitfield32'),
    p('N', 'uint16'),
    p('TmsPer', 'uint16'),
  ],
  repeating: [
    p('ID', 'uint16'),
    s('IDStr', 8),
    p('DCA', 'uint16', 'DCA_SF', 'A'),
    p('DCV', 'uint16', 'DCV_SF', 'V'),
    p('DCW', 'uint16', 'DCW_SF', 'W'),
    p('DCWH', 'acc32', 'DCWH_SF', 'Wh'),
    p('Tms', 'uint32', undefined, 'Secs'),
    p('Tmp', 'int16', undefined, 'C'),
    p('DCSt', 'enum16'),
    p('DCEvt', 'bitfield32'),
  ],
};

function meterIntegerModel(id: number, name: string): ModelDef {
  const energy = (n: string, sf: string, u: string) => phases(n, 'acc32', sf, u, 'Ph');
  return {
    id,
    name,
    fixed: [
      ...phases('A', 'int16', 'A_SF', 'A'),
      p('A_SF', 'sunssf'),
      ...phases('PhV', 'int16', 'V_SF', 'V'),
      p('PPV', 'int16', 'V_SF', 'V'),
      p('PhVphAB', 'int16', 'V_SF', 'V'),
      p('PhVphBC', 'int16', 'V_SF', 'V'),
      p('PhVphCA', 'int16', 'V_SF', 'V'),
      p('V_SF', 'sunssf'),
      p('Hz', 'int16', 'Hz_SF', 'Hz'),
      p('Hz_SF', 'sunssf'),
      ...phases('W', 'int16', 'W_SF', 'W'),
      p('W_SF', 'sunssf'),
      ...phases('VA', 'int16', 'VA_SF', 'VA'),
      p('VA_SF', 'sunssf'),
      ...phases('VAR', 'int16', 'VAR_SF', 'var'),
      p('VAR_SF', 'sunssf'),
      ...phases('PF', 'int16', 'PF_SF', 'Pct'),
      p('PF_SF', 'sunssf'),
      ...energy('TotWhExp', 'TotWh_SF', 'Wh'),
      ...energy('TotWhImp', 'TotWh_SF', 'Wh'),
      p('TotWh_SF', 'sunssf'),
      ...energy('TotVAhExp', 'TotVAh_SF', 'VAh'),
      ...energy('TotVAhImp', 'TotVAh_SF', 'VAh'),
      p('TotVAh_SF', 'sunssf'),
      ...energy('TotVArhImpQ1', 'TotVArh_SF', 'varh'),
      ...energy('TotVArhImpQ2', 'TotVArh_SF', 'varh'),
      ...energy('TotVArhExpQ3', 'TotVArh_SF', 'varh'),
      ...energy('TotVArhExpQ4', 'TotVArh_SF', 'varh'),
      p('TotVArh_SF', 'sunssf'),
      p('Evt', 'bitfield32'),
    ],
  };
}
export const MODEL_201 = meterIntegerModel(201, 'ac_meter_single_phase');
export const MODEL_202 = meterIntegerModel(202, 'ac_meter_split_phase');
export const MODEL_203 = meterIntegerModel(203, 'ac_meter_three_phase_wye');
export const MODEL_204 = meterIntegerModel(204, 'ac_meter_three_phase_delta');

/** Meter event bits (models 201-204 `Evt`). */
export const METER_EVT = {
  POWER_FAILURE: 1 << 2,
  UNDER_VOLTAGE: 1 << 3,
  LOW_PF: 1 << 4,
  OVER_CURRENT: 1 << 5,
  OVER_VOLTAGE: 1 << 6,
  MISSING_SENSOR: 1 << 7,
} as const;

export const MODEL_802: ModelDef = {
  id: 802,
  name: 'battery',
  fixed: [
    p('AHRtg', 'uint16', 'AHRtg_SF', 'Ah'),
    p('WHRtg', 'uint16', 'WHRtg_SF', 'Wh'),
    p('WChaRteMax', 'uint16', 'WChaDisChaMax_SF', 'W'),
    p('WDisChaRteMax', 'uint16', 'WChaDisChaMax_SF', 'W'),
    p('DisChaRte', 'uint16', 'DisChaRte_SF', '%WHRtg'),
    p('SoCMax', 'uint16', 'SoC_SF', '%WHRtg'),
    p('SoCMin', 'uint16', 'SoC_SF', '%WHRtg'),
    p('SoCRsvMax', 'uint16', 'SoC_SF', '%WHRtg'),
    p('SoCRsvMin', 'uint16', 'SoC_SF', '%WHRtg'),
    p('SoC', 'uint16', 'SoC_SF', '%WHRtg'),
    p('DoD', 'uint16', 'DoD_SF', '%'),
    p('SoH', 'uint16', 'SoH_SF', '%'),
    p('NCyc', 'uint32'),
    p('ChaSt', 'enum16'),
    p('LocRemCtl', 'enum16'),
    p('Hb', 'uint16'),
    p('CtrlHb', 'uint16'),
    p('AlmRst', 'uint16'),
    p('Typ', 'enum16'),
    p('State', 'enum16'),
    p('StateVnd', 'enum16'),
    p('WarrDt', 'uint32'),
    p('Evt1', 'bitfield32'),
    p('Evt2', 'bitfield32'),
    p('EvtVnd1', 'bitfield32'),
    p('EvtVnd2', 'bitfield32'),
    p('V', 'uint16', 'V_SF', 'V'),
    p('VMax', 'uint16', 'V_SF', 'V'),
    p('VMin', 'uint16', 'V_SF', 'V'),
    p('CellVMax', 'uint16', 'CellV_SF', 'V'),
    p('CellVMaxStr', 'uint16'),
    p('CellVMaxMod', 'uint16'),
    p('CellVMin', 'uint16', 'CellV_SF', 'V'),
    p('CellVMinStr', 'uint16'),
    p('CellVMinMod', 'uint16'),
    p('CellVAvg', 'uint16', 'CellV_SF', 'V'),
    p('A', 'int16', 'A_SF', 'A'),
    p('AChaMax', 'uint16', 'AMax_SF', 'A'),
    p('ADisChaMax', 'uint16', 'AMax_SF', 'A'),
    p('W', 'int16', 'W_SF', 'W'),
    p('ReqInvState', 'enum16'),
    p('ReqW', 'int16', 'W_SF', 'W'),
    p('SetOp', 'enum16'),
    p('SetInvState', 'enum16'),
    p('AHRtg_SF', 'sunssf'),
    p('WHRtg_SF', 'sunssf'),
    p('WChaDisChaMax_SF', 'sunssf'),
    p('DisChaRte_SF', 'sunssf'),
    p('SoC_SF', 'sunssf'),
    p('DoD_SF', 'sunssf'),
    p('SoH_SF', 'sunssf'),
    p('V_SF', 'sunssf'),
    p('CellV_SF', 'sunssf'),
    p('A_SF', 'sunssf'),
    p('AMax_SF', 'sunssf'),
    p('W_SF', 'sunssf'),
  ],
};

export const MODELS: ReadonlyMap<number, ModelDef> = new Map(
  [MODEL_1, MODEL_101, MODEL_102, MODEL_103, MODEL_124, MODEL_160, MODEL_201, MODEL_202, MODEL_203, MODEL_204, MODEL_802].map(
    (m) => [m.id, m],
  ),
);

export function blockLength(points: readonly PointDef[]): number {
  return points.reduce((n, pt) => n + pt.size, 0);
}

/** offset of each point from the start of its block */
export function offsets(points: readonly PointDef[]): Map<string, PointDef & { offset: number }> {
  const out = new Map<string, PointDef & { offset: number }>();
  let o = 0;
  for (const pt of points) {
    out.set(pt.name, { ...pt, offset: o });
    o += pt.size;
  }
  return out;
}

/** SunSpec "SunS" marker registers and the end-of-chain model id */
export const SUNS_MARKER = [0x5375, 0x6e53] as const;
export const END_MODEL_ID = 0xffff;
/** base addresses probed by discovery, in order */
export const SUNSPEC_BASES = [40000, 0, 50000] as const;

/** not-implemented values by type (SunSpec Information Model Reference, "unimplemented") */
export const NOT_IMPLEMENTED: Partial<Record<PointType, number>> = {
  uint16: 0xffff,
  int16: -0x8000,
  uint32: 0xffffffff,
  int32: -0x80000000,
  acc16: 0,
  acc32: 0,
  enum16: 0xffff,
  bitfield16: 0xffff,
  bitfield32: 0xffffffff,
  sunssf: -0x8000,
};
