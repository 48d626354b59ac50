/**
 * Inverter controls models 120 (nameplate, L 26), 121 (basic settings, L 30), 122 (extended
 * measurements and status, L 44) and 123 (immediate controls, L 24), from the SunSpec models
 * repository json/model_120.json … model_123.json. The gateway reads them; it writes none.
 */
import { type ModelDef, p, s } from './points.js';

const quadrants = (name: string, type: 'int16', sf: string, units: string) =>
  [1, 2, 3, 4].map((q) => p(`${name}Q${q}`, type, sf, units));

export const MODEL_120: ModelDef = {
  id: 120,
  name: 'nameplate',
  fixed: [
    p('DERTyp', 'enum16'),
    p('WRtg', 'uint16', 'WRtg_SF', 'W'),
    p('WRtg_SF', 'sunssf'),
    p('VARtg', 'uint16', 'VARtg_SF', 'VA'),
    p('VARtg_SF', 'sunssf'),
    ...quadrants('VArRtg', 'int16', 'VArRtg_SF', 'var'),
    p('VArRtg_SF', 'sunssf'),
    p('ARtg', 'uint16', 'ARtg_SF', 'A'),
    p('ARtg_SF', 'sunssf'),
    ...quadrants('PFRtg', 'int16', 'PFRtg_SF', 'cos()'),
    p('PFRtg_SF', 'sunssf'),
    p('WHRtg', 'uint16', 'WHRtg_SF', 'Wh'),
    p('WHRtg_SF', 'sunssf'),
    p('AhrRtg', 'uint16', 'AhrRtg_SF', 'AH'),
    p('AhrRtg_SF', 'sunssf'),
    p('MaxChaRte', 'uint16', 'MaxChaRte_SF', 'W'),
    p('MaxChaRte_SF', 'sunssf'),
    p('MaxDisChaRte', 'uint16', 'MaxDisChaRte_SF', 'W'),
    p('MaxDisChaRte_SF', 'sunssf'),
    p('Pad', 'pad'),
  ],
};

export const MODEL_121: ModelDef = {
  id: 121,
  name: 'settings',
  fixed: [
    p('WMax', 'uint16', 'WMax_SF', 'W'),
    p('VRef', 'uint16', 'VRef_SF', 'V'),
    p('VRefOfs', 'int16', 'VRefOfs_SF', 'V'),
    p('VMax', 'uint16', 'VMinMax_SF', 'V'),
    p('VMin', 'uint16', 'VMinMax_SF', 'V'),
    p('VAMax', 'uint16', 'VAMax_SF', 'VA'),
    ...quadrants('VArMax', 'int16', 'VArMax_SF', 'var'),
    p('WGra', 'uint16', 'WGra_SF', '% WMax/sec'),
    ...quadrants('PFMin', 'int16', 'PFMin_SF', 'cos()'),
    p('VArAct', 'enum16'),
    p('ClcTotVA', 'enum16'),
    p('MaxRmpRte', 'uint16', 'MaxRmpRte_SF', '% WGra'),
    p('ECPNomHz', 'uint16', 'ECPNomHz_SF', 'Hz'),
    p('ConnPh', 'enum16'),
    p('WMax_SF', 'sunssf'),
    p('VRef_SF', 'sunssf'),
    p('VRefOfs_SF', 'sunssf'),
    p('VMinMax_SF', 'sunssf'),
    p('VAMax_SF', 'sunssf'),
    p('VArMax_SF', 'sunssf'),
    p('WGra_SF', 'sunssf'),
    p('PFMin_SF', 'sunssf'),
    p('MaxRmpRte_SF', 'sunssf'),
    p('ECPNomHz_SF', 'sunssf'),
  ],
};

export const MODEL_122: ModelDef = {
  id: 122,
  name: 'status',
  fixed: [
    p('PVConn', 'bitfield16'),
    p('StorConn', 'bitfield16'),
    p('ECPConn', 'bitfield16'),
    p('ActWh', 'acc64', undefined, 'Wh'),
    p('ActVAh', 'acc64', undefined, 'VAh'),
    p('ActVArhQ1', 'acc64', undefined, 'varh'),
    p('ActVArhQ2', 'acc64', undefined, 'varh'),
    p('ActVArhQ3', 'acc64', undefined, 'varh'),
    p('ActVArhQ4', 'acc64', undefined, 'varh'),
    p('VArAval', 'int16', 'VArAval_SF', 'var'),
    p('VArAval_SF', 'sunssf'),
    p('WAval', 'uint16', 'WAval_SF', 'W'),
    p('WAval_SF', 'sunssf'),
    p('StSetLimMsk', 'bitfield32'),
    p('StActCtl', 'bitfield32'),
    s('TmSrc', 4),
    p('Tms', 'uint32', undefined, 'Secs'),
    p('RtSt', 'bitfield16'),
    p('Ris', 'uint16', 'Ris_SF', 'ohms'),
    p('Ris_SF', 'sunssf'),
  ],
};

/** 122 status bits: PVConn/StorConn bit 0 CONNECTED, 1 AVAILABLE, 2 OPERATING, 3 TEST; ECPConn bit 0 CONNECTED */
export const CONN_BITS = { CONNECTED: 1 << 0, AVAILABLE: 1 << 1, OPERATING: 1 << 2, TEST: 1 << 3 } as const;

export const MODEL_123: ModelDef = {
  id: 123,
  name: 'controls',
  fixed: [
    p('Conn_WinTms', 'uint16', undefined, 'Secs'),
    p('Conn_RvrtTms', 'uint16', undefined, 'Secs'),
    p('Conn', 'enum16'),
    p('WMaxLimPct', 'uint16', 'WMaxLimPct_SF', '% WMax'),
    p('WMaxLimPct_WinTms', 'uint16', undefined, 'Secs'),
    p('WMaxLimPct_RvrtTms', 'uint16', undefined, 'Secs'),
    p('WMaxLimPct_RmpTms', 'uint16', undefined, 'Secs'),
    p('WMaxLim_Ena', 'enum16'),
    p('OutPFSet', 'int16', 'OutPFSet_SF', 'cos()'),
    p('OutPFSet_WinTms', 'uint16', undefined, 'Secs'),
    p('OutPFSet_RvrtTms', 'uint16', undefined, 'Secs'),
    p('OutPFSet_RmpTms', 'uint16', undefined, 'Secs'),
    p('OutPFSet_Ena', 'enum16'),
    p('VArWMaxPct', 'int16', 'VArPct_SF', '% WMax'),
    p('VArMaxPct', 'int16', 'VArPct_SF', '% VArMax'),
    p('VArAvalPct', 'int16', 'VArPct_SF', '% VArAval'),
    p('VArPct_WinTms', 'uint16', undefined, 'Secs'),
    p('VArPct_RvrtTms', 'uint16', undefined, 'Secs'),
    p('VArPct_RmpTms', 'uint16', undefined, 'Secs'),
    p('VArPct_Mod', 'enum16'),
    p('VArPct_Ena', 'enum16'),
    p('WMaxLimPct_SF', 'sunssf'),
    p('OutPFSet_SF', 'sunssf'),
    p('VArPct_SF', 'sunssf'),
  ],
};
