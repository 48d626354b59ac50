import { describe, expect, it } from 'vitest';
import { blockLength, MODELS, offsets } from '../../src/modbus/sunspec/models.js';

/**
 * Model lengths as published: the "L" value (or the sum of the point sizes where the JSON gives
 * no value) of json/model_<id>.json in the SunSpec models repository, written down by hand.
 * For models with a repeating group: the fixed part and one repeat.
 */
const PUBLISHED_L: Record<number, number | { fixed: number; repeat: number }> = {
  1: 66,
  101: 50,
  102: 50,
  103: 50,
  111: 60,
  112: 60,
  113: 60,
  120: 26,
  121: 30,
  122: 44,
  123: 24,
  124: 24,
  160: { fixed: 8, repeat: 20 },
  201: 105,
  202: 105,
  203: 105,
  204: 105,
  211: 124,
  212: 124,
  213: 124,
  214: 124,
  701: 153,
  702: 50,
  703: 17,
  704: 65,
  714: { fixed: 18, repeat: 25 },
  802: 62,
  803: { fixed: 26, repeat: 32 },
  804: { fixed: 46, repeat: 16 },
};

describe('SunSpec layouts', () => {
  it.each(Object.entries(PUBLISHED_L))('model %s has the published length', (id, published) => {
    const def = MODELS.get(Number(id));
    expect(def, `model ${id} is decoded`).toBeDefined();
    if (typeof published === 'number') {
      expect(blockLength(def!.fixed)).toBe(published);
      expect(def!.repeating).toBeUndefined();
    } else {
      expect(blockLength(def!.fixed)).toBe(published.fixed);
      expect(blockLength(def!.repeating ?? [])).toBe(published.repeat);
    }
  });

  it('decodes every model the issue names and no other', () => {
    expect([...MODELS.keys()].sort((a, b) => a - b)).toEqual(Object.keys(PUBLISHED_L).map(Number));
  });

  it('has no point twice in a model', () => {
    for (const def of MODELS.values()) {
      for (const block of [def.fixed, def.repeating ?? []]) {
        const names = block.map((p) => p.name);
        expect(new Set(names).size, `model ${def.id}`).toBe(names.length);
      }
    }
  });

  it('refers only to scale factors of its own fixed block', () => {
    for (const def of MODELS.values()) {
      const sfs = new Set(def.fixed.filter((p) => p.type === 'sunssf').map((p) => p.name));
      for (const p of [...def.fixed, ...(def.repeating ?? [])])
        if (p.sf) expect(sfs.has(p.sf), `${def.id} ${p.name} → ${p.sf}`).toBe(true);
    }
  });

  // offsets counted by hand down the published point lists (size 1 unless the type is 32/64-bit)
  it.each([
    [213, 'W', 26],
    [213, 'TotWhExp', 58],
    [213, 'TotWhImp', 66],
    [213, 'TotVArhImpQ1phA', 92],
    [213, 'Evt', 122],
    [113, 'W', 20],
    [113, 'WH', 30],
    [113, 'St', 46],
    [120, 'WHRtg', 17],
    [122, 'ECPConn', 2],
    [122, 'TmSrc', 35],
    [122, 'Ris_SF', 43],
    [123, 'VArPct_SF', 23],
    [701, 'ConnSt', 3],
    [701, 'TotWhInj', 17],
    [701, 'WL1', 39],
    [701, 'VL2L3', 67],
    [701, 'VL3L1', 90],
    [701, 'TotVarhAbsL3', 104],
    [701, 'W_SF', 114],
    [701, 'MnAlrmInfo', 121],
    [702, 'IntIslandCatRtg', 23],
    [702, 'S_SF', 49],
    [703, 'ESDlyRemTms', 13],
    [704, 'WSet', 22],
    [704, 'AntiIslEna', 50],
    [704, 'PFWInj.PF', 57],
    [704, 'PFWAbsRvrt.Ext', 64],
    [714, 'NPrt', 2],
    [714, 'Tmp_SF', 17],
    [803, 'ModTmpMax', 2],
    [803, 'ModTmpAvg', 8],
    [803, 'ModTmp_SF', 21],
    [803, 'V_SF', 25],
    [804, 'ModTmpMax', 18],
    [804, 'ModTmpAvg', 22],
    [804, 'ModTmp_SF', 42],
  ] as const)('model %s point %s sits at offset %s', (id, name, offset) => {
    expect(offsets(MODELS.get(id)!.fixed).get(name)?.offset).toBe(offset);
  });

  it('lays out a 714 DC port as published', () => {
    const port = offsets(MODELS.get(714)!.repeating!);
    expect([...port.entries()].map(([n, p]) => [n, p.offset])).toEqual([
      ['PrtTyp', 0],
      ['ID', 1],
      ['IDStr', 2],
      ['DCA', 10],
      ['DCV', 11],
      ['DCW', 12],
      ['DCWhInj', 13],
      ['DCWhAbs', 17],
      ['Tmp', 21],
      ['DCSta', 22],
      ['DCAlrm', 23],
    ]);
  });
});
