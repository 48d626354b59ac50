/**
 * SunSpec information models used by the gateway and the simulator: point order, type, size and
 * scale-factor reference, as published in the SunSpec models repository (json/model_<id>.json,
 * github.com/sunspec/models) and the SunSpec Information Model Reference. Offsets are derived
 * from the order; they are counted from the first register after the model's ID and L header.
 *
 * Only the layouts are written here; how a point becomes a spec channel lives in the profile
 * mapping (src/profiles/sunspec.ts), so adding a model is adding data.
 */

import { MODEL_802, MODEL_803, MODEL_804 } from './models-battery.js';
import { MODEL_120, MODEL_121, MODEL_122, MODEL_123 } from './models-controls.js';
import { MODEL_701, MODEL_702, MODEL_703, MODEL_704, MODEL_714 } from './models-der.js';
import { MODEL_111, MODEL_112, MODEL_113, MODEL_211, MODEL_212, MODEL_213, MODEL_214 } from './models-float.js';
import { inverterStateAndEvents, type ModelDef, p, phases, s } from './points.js';

export { MODEL_802, MODEL_803, MODEL_804 } from './models-battery.js';
export { MODEL_120, MODEL_121, MODEL_122, MODEL_123 } from './models-controls.js';
export { MODEL_701, MODEL_702, MODEL_703, MODEL_704, MODEL_714 } from './models-der.js';
export { MODEL_111, MODEL_112, MODEL_113, MODEL_211, MODEL_212, MODEL_213, MODEL_214 } from './models-float.js';
export { blockLength, type ModelDef, NOT_IMPLEMENTED, offsets, type PointDef, type PointType } from './points.js';

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
      ...inverterStateAndEvents(),
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
  countPoint: 'N',
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

/** every model the gateway decodes, by id; a model not listed here is skipped in the chain */
export const MODELS: ReadonlyMap<number, ModelDef> = new Map(
  [
    MODEL_1,
    MODEL_101,
    MODEL_102,
    MODEL_103,
    MODEL_111,
    MODEL_112,
    MODEL_113,
    MODEL_120,
    MODEL_121,
    MODEL_122,
    MODEL_123,
    MODEL_124,
    MODEL_160,
    MODEL_201,
    MODEL_202,
    MODEL_203,
    MODEL_204,
    MODEL_211,
    MODEL_212,
    MODEL_213,
    MODEL_214,
    MODEL_701,
    MODEL_702,
    MODEL_703,
    MODEL_704,
    MODEL_714,
    MODEL_802,
    MODEL_803,
    MODEL_804,
  ].map((m) => [m.id, m]),
);

/** SunSpec "SunS" marker registers and the end-of-chain model id */
export const SUNS_MARKER = [0x5375, 0x6e53] as const;
export const END_MODEL_ID = 0xffff;
/** base addresses probed by discovery, in order */
export const SUNSPEC_BASES = [40000, 0, 50000] as const;
