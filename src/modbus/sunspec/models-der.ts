/**
 * DER models (IEEE 1547-2018 family) from the SunSpec models repository, as last published there:
 * json/model_701.json (DER AC measurement, L 153), model_702.json (DER capacity, L 50),
 * model_703.json (enter service, L 17), model_704.json (DER AC controls, L 65, with four nested
 * power-factor groups laid out after its own points) and model_714.json (DER DC measurement,
 * L 18 + 25 per DC port, the ports a repeating group counted by NPrt).
 *
 * Enumerations in these models count from 0 (701 ConnSt: 0 DISCONNECTED, 1 CONNECTED; St: 0 OFF,
 * 1 ON), unlike the 1-based states of the 10x/11x inverter models.
 */
import { group, type ModelDef, type PointDef, p, s } from './points.js';

/** 701's per-phase points; the JSON marks each run with a comment "L1", "L2", "L3" */
function der701Phase(n: 1 | 2 | 3): PointDef[] {
  const l = `L${n}`;
  const next = `L${(n % 3) + 1}`;
  return [
    p(`W${l}`, 'int16', 'W_SF', 'W'),
    p(`VA${l}`, 'int16', 'VA_SF', 'VA'),
    p(`Var${l}`, 'int16', 'Var_SF', 'var'),
    p(`PF${l}`, 'uint16', 'PF_SF'),
    p(`A${l}`, 'int16', 'A_SF', 'A'),
    p(`V${l}${next}`, 'uint16', 'V_SF', 'V'),
    p(`V${l}`, 'uint16', 'V_SF', 'V'),
    p(`TotWhInj${l}`, 'uint64', 'TotWh_SF', 'Wh'),
    p(`TotWhAbs${l}`, 'uint64', 'TotWh_SF', 'Wh'),
    p(`TotVarhInj${l}`, 'uint64', 'TotVarh_SF', 'varh'),
    p(`TotVarhAbs${l}`, 'uint64', 'TotVarh_SF', 'varh'),
  ];
}

export const MODEL_701: ModelDef = {
  id: 701,
  name: 'DERMeasureAC',
  fixed: [
    p('ACType', 'enum16'),
    p('St', 'enum16'),
    p('InvSt', 'enum16'),
    p('ConnSt', 'enum16'),
    p('Alrm', 'bitfield32'),
    p('DERMode', 'bitfield32'),
    p('W', 'int16', 'W_SF', 'W'),
    p('VA', 'int16', 'VA_SF', 'VA'),
    p('Var', 'int16', 'Var_SF', 'var'),
    p('PF', 'uint16', 'PF_SF'),
    p('A', 'int16', 'A_SF', 'A'),
    p('LLV', 'uint16', 'V_SF', 'V'),
    p('LNV', 'uint16', 'V_SF', 'V'),
    p('Hz', 'uint32', 'Hz_SF', 'Hz'),
    p('TotWhInj', 'uint64', 'TotWh_SF', 'Wh'),
    p('TotWhAbs', 'uint64', 'TotWh_SF', 'Wh'),
    p('TotVarhInj', 'uint64', 'TotVarh_SF', 'varh'),
    p('TotVarhAbs', 'uint64', 'TotVarh_SF', 'varh'),
    p('TmpAmb', 'int16', 'Tmp_SF', 'C'),
    p('TmpCab', 'int16', 'Tmp_SF', 'C'),
    p('TmpSnk', 'int16', 'Tmp_SF', 'C'),
    p('TmpTrns', 'int16', 'Tmp_SF', 'C'),
    p('TmpSw', 'int16', 'Tmp_SF', 'C'),
    p('TmpOt', 'int16', 'Tmp_SF', 'C'),
    ...der701Phase(1),
    ...der701Phase(2),
    ...der701Phase(3),
    p('ThrotPct', 'uint16', undefined, 'Pct'),
    p('ThrotSrc', 'bitfield32'),
    p('A_SF', 'sunssf'),
    p('V_SF', 'sunssf'),
    p('Hz_SF', 'sunssf'),
    p('W_SF', 'sunssf'),
    p('PF_SF', 'sunssf'),
    p('VA_SF', 'sunssf'),
    p('Var_SF', 'sunssf'),
    p('TotWh_SF', 'sunssf'),
    p('TotVarh_SF', 'sunssf'),
    p('Tmp_SF', 'sunssf'),
    s('MnAlrmInfo', 32),
  ],
};

/** 701 enumerations and bits the profile reads */
export const DER_701 = {
  ST_ON: 1,
  CONN_DISCONNECTED: 0,
  CONN_CONNECTED: 1,
  /** DERMode bit 1: the DER is providing the grid (islanded / backup) */
  MODE_GRID_FORMING: 1 << 1,
} as const;

const ratings = (
  names: readonly [string, 'W_SF' | 'PF_SF' | 'VA_SF' | 'Var_SF' | 'V_SF' | 'A_SF' | 'S_SF', string?][],
) => names.map(([n, sf, u]) => p(n, 'uint16', sf, u));

export const MODEL_702: ModelDef = {
  id: 702,
  name: 'DERCapacity',
  fixed: [
    ...ratings([
      ['WMaxRtg', 'W_SF', 'W'],
      ['WOvrExtRtg', 'W_SF', 'W'],
      ['WOvrExtRtgPF', 'PF_SF'],
      ['WUndExtRtg', 'W_SF', 'W'],
      ['WUndExtRtgPF', 'PF_SF'],
      ['VAMaxRtg', 'VA_SF', 'VA'],
      ['VarMaxInjRtg', 'Var_SF', 'var'],
      ['VarMaxAbsRtg', 'Var_SF', 'var'],
      ['WChaRteMaxRtg', 'W_SF', 'W'],
      ['WDisChaRteMaxRtg', 'W_SF', 'W'],
      ['VAChaRteMaxRtg', 'VA_SF', 'VA'],
      ['VADisChaRteMaxRtg', 'VA_SF', 'VA'],
      ['VNomRtg', 'V_SF', 'V'],
      ['VMaxRtg', 'V_SF', 'V'],
      ['VMinRtg', 'V_SF', 'V'],
      ['AMaxRtg', 'A_SF', 'A'],
      ['PFOvrExtRtg', 'PF_SF'],
      ['PFUndExtRtg', 'PF_SF'],
      ['ReactSusceptRtg', 'S_SF', 'S'],
    ]),
    p('NorOpCatRtg', 'enum16'),
    p('AbnOpCatRtg', 'enum16'),
    p('CtrlModes', 'bitfield32'),
    p('IntIslandCatRtg', 'bitfield16'),
    ...ratings([
      ['WMax', 'W_SF', 'W'],
      ['WMaxOvrExt', 'W_SF', 'W'],
      ['WOvrExtPF', 'PF_SF'],
      ['WMaxUndExt', 'W_SF', 'W'],
      ['WUndExtPF', 'PF_SF'],
      ['VAMax', 'VA_SF', 'VA'],
      ['VarMaxInj', 'Var_SF', 'var'],
      ['VarMaxAbs', 'Var_SF', 'var'],
      ['WChaRteMax', 'W_SF', 'W'],
      ['WDisChaRteMax', 'W_SF', 'W'],
      ['VAChaRteMax', 'VA_SF', 'VA'],
      ['VADisChaRteMax', 'VA_SF', 'VA'],
      ['VNom', 'V_SF', 'V'],
      ['VMax', 'V_SF', 'V'],
      ['VMin', 'V_SF', 'V'],
      ['AMax', 'A_SF', 'A'],
      ['PFOvrExt', 'PF_SF'],
      ['PFUndExt', 'PF_SF'],
    ]),
    p('IntIslandCat', 'bitfield16'),
    p('W_SF', 'sunssf'),
    p('PF_SF', 'sunssf'),
    p('VA_SF', 'sunssf'),
    p('Var_SF', 'sunssf'),
    p('V_SF', 'sunssf'),
    p('A_SF', 'sunssf'),
    p('S_SF', 'sunssf'),
  ],
};

export const MODEL_703: ModelDef = {
  id: 703,
  name: 'DEREnterService',
  fixed: [
    p('ES', 'enum16'),
    p('ESVHi', 'uint16', 'V_SF', 'Pct'),
    p('ESVLo', 'uint16', 'V_SF', 'Pct'),
    p('ESHzHi', 'uint32', 'Hz_SF', 'Hz'),
    p('ESHzLo', 'uint32', 'Hz_SF', 'Hz'),
    p('ESDlyTms', 'uint32', undefined, 'Secs'),
    p('ESRndTms', 'uint32', undefined, 'Secs'),
    p('ESRmpTms', 'uint32', undefined, 'Secs'),
    p('ESDlyRemTms', 'uint32', undefined, 'Secs'),
    p('V_SF', 'sunssf'),
    p('Hz_SF', 'sunssf'),
  ],
};

/** 704's reversion time of a setting and the time left of it */
function reversionTimer(prefix: string): PointDef[] {
  return [p(`${prefix}RvrtTms`, 'uint32', undefined, 'Secs'), p(`${prefix}RvrtRem`, 'uint32', undefined, 'Secs')];
}
/** enable, reversion enable and reversion timer of one of 704's power-factor settings */
function pfSettings(prefix: 'PFWInj' | 'PFWAbs'): PointDef[] {
  return [p(`${prefix}Ena`, 'enum16'), p(`${prefix}EnaRvrt`, 'enum16'), ...reversionTimer(prefix)];
}
const pfGroup = [p('PF', 'uint16', 'PF_SF'), p('Ext', 'enum16')];

export const MODEL_704: ModelDef = {
  id: 704,
  name: 'DERCtlAC',
  fixed: [
    ...pfSettings('PFWInj'),
    ...pfSettings('PFWAbs'),
    p('WMaxLimPctEna', 'enum16'),
    p('WMaxLimPct', 'uint16', 'WMaxLimPct_SF', 'Pct'),
    p('WMaxLimPctRvrt', 'uint16', 'WMaxLimPct_SF', 'Pct'),
    p('WMaxLimPctEnaRvrt', 'enum16'),
    ...reversionTimer('WMaxLimPct'),
    p('WSetEna', 'enum16'),
    p('WSetMod', 'enum16'),
    p('WSet', 'int32', 'WSet_SF', 'W'),
    p('WSetRvrt', 'int32', 'WSet_SF', 'W'),
    p('WSetPct', 'int16', 'WSetPct_SF', 'Pct'),
    p('WSetPctRvrt', 'int16', 'WSetPct_SF', 'Pct'),
    p('WSetEnaRvrt', 'enum16'),
    ...reversionTimer('WSet'),
    p('VarSetEna', 'enum16'),
    p('VarSetMod', 'enum16'),
    p('VarSetPri', 'enum16'),
    p('VarSet', 'int32', 'VarSet_SF', 'var'),
    p('VarSetRvrt', 'int32', 'VarSet_SF', 'var'),
    p('VarSetPct', 'int16', 'VarSetPct_SF', 'Pct'),
    p('VarSetPctRvrt', 'int16', 'VarSetPct_SF', 'Pct'),
    p('VarSetEnaRvrt', 'enum16'),
    ...reversionTimer('VarSet'),
    p('WRmp', 'uint16', undefined, '%Max/Sec'),
    p('WRmpRef', 'enum16'),
    p('VarRmp', 'uint16', undefined, '%Max/Sec'),
    p('AntiIslEna', 'enum16'),
    p('PF_SF', 'sunssf'),
    p('WMaxLimPct_SF', 'sunssf'),
    p('WSet_SF', 'sunssf'),
    p('WSetPct_SF', 'sunssf'),
    p('VarSet_SF', 'sunssf'),
    p('VarSetPct_SF', 'sunssf'),
    ...group('PFWInj', pfGroup),
    ...group('PFWInjRvrt', pfGroup),
    ...group('PFWAbs', pfGroup),
    ...group('PFWAbsRvrt', pfGroup),
  ],
};

export const MODEL_714: ModelDef = {
  id: 714,
  name: 'DERMeasureDC',
  fixed: [
    p('PrtAlrms', 'bitfield32'),
    p('NPrt', 'uint16'),
    p('DCA', 'int16', 'DCA_SF', 'A'),
    p('DCW', 'int16', 'DCW_SF', 'W'),
    p('DCWhInj', 'uint64', 'DCWH_SF', 'Wh'),
    p('DCWhAbs', 'uint64', 'DCWH_SF', 'Wh'),
    p('DCA_SF', 'sunssf'),
    p('DCV_SF', 'sunssf'),
    p('DCW_SF', 'sunssf'),
    p('DCWH_SF', 'sunssf'),
    p('Tmp_SF', 'sunssf'),
  ],
  countPoint: 'NPrt',
  repeating: [
    p('PrtTyp', 'enum16'),
    p('ID', 'uint16'),
    s('IDStr', 8),
    p('DCA', 'int16', 'DCA_SF', 'A'),
    p('DCV', 'uint16', 'DCV_SF', 'V'),
    p('DCW', 'int16', 'DCW_SF', 'W'),
    p('DCWhInj', 'uint64', 'DCWH_SF', 'Wh'),
    p('DCWhAbs', 'uint64', 'DCWH_SF', 'Wh'),
    p('Tmp', 'int16', undefined, 'C'),
    p('DCSta', 'enum16'),
    p('DCAlrm', 'bitfield32'),
  ],
};

/** 714 port types (PrtTyp) */
export const DC_PORT = { PV: 0, ESS: 1 } as const;
