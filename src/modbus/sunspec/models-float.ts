/**
 * Float variants of the inverter and meter models: 111/112/113 (inverter single, split, three
 * phase, L 60) and 211/212/213/214 (AC meter single phase, split phase, wye, delta, L 124), from
 * the SunSpec models repository json/model_111.json … model_113.json and model_211.json …
 * model_214.json. Each family shares one point list; values are IEEE 754 float32, high word first,
 * with no scale factors, and NaN (0x7FC00000) marks a point the device does not implement.
 */
import { inverterStateAndEvents, type ModelDef, p, phases } from './points.js';

const f = (name: string, units?: string) => p(name, 'float32', undefined, units);

function inverterFloatModel(id: number, name: string): ModelDef {
  return {
    id,
    name,
    fixed: [
      ...phases('A', 'float32', undefined, 'A'),
      f('PPVphAB', 'V'),
      f('PPVphBC', 'V'),
      f('PPVphCA', 'V'),
      f('PhVphA', 'V'),
      f('PhVphB', 'V'),
      f('PhVphC', 'V'),
      f('W', 'W'),
      f('Hz', 'Hz'),
      f('VA', 'VA'),
      f('VAr', 'var'),
      f('PF', 'Pct'),
      f('WH', 'Wh'),
      f('DCA', 'A'),
      f('DCV', 'V'),
      f('DCW', 'W'),
      f('TmpCab', 'C'),
      f('TmpSnk', 'C'),
      f('TmpTrns', 'C'),
      f('TmpOt', 'C'),
      ...inverterStateAndEvents(),
    ],
  };
}
export const MODEL_111 = inverterFloatModel(111, 'inverter_single_phase_float');
export const MODEL_112 = inverterFloatModel(112, 'inverter_split_phase_float');
export const MODEL_113 = inverterFloatModel(113, 'inverter_three_phase_float');

function meterFloatModel(id: number, name: string): ModelDef {
  const total = (n: string, u: string, ph = 'ph') => phases(n, 'float32', undefined, u, ph);
  return {
    id,
    name,
    fixed: [
      ...total('A', 'A'),
      ...total('PhV', 'V'),
      f('PPV', 'V'),
      f('PPVphAB', 'V'),
      f('PPVphBC', 'V'),
      f('PPVphCA', 'V'),
      f('Hz', 'Hz'),
      ...total('W', 'W'),
      ...total('VA', 'VA'),
      ...total('VAR', 'var'),
      ...total('PF', 'PF'),
      // the published names: Wh and VAh per-phase points spell "Ph", the varh ones "ph"
      ...total('TotWhExp', 'Wh', 'Ph'),
      ...total('TotWhImp', 'Wh', 'Ph'),
      ...total('TotVAhExp', 'VAh', 'Ph'),
      ...total('TotVAhImp', 'VAh', 'Ph'),
      ...total('TotVArhImpQ1', 'varh'),
      ...total('TotVArhImpQ2', 'varh'),
      ...total('TotVArhExpQ3', 'varh'),
      ...total('TotVArhExpQ4', 'varh'),
      p('Evt', 'bitfield32'),
    ],
  };
}
export const MODEL_211 = meterFloatModel(211, 'ac_meter_single_phase_float');
export const MODEL_212 = meterFloatModel(212, 'ac_meter_split_phase_float');
export const MODEL_213 = meterFloatModel(213, 'ac_meter_three_phase_wye_float');
export const MODEL_214 = meterFloatModel(214, 'ac_meter_three_phase_delta_float');
