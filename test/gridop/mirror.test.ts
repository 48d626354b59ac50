import { describe, expect, it } from 'vitest';
import { clientMrid, MIRROR_QUANTITIES, Mirror } from '../../src/gridop/mirror.js';
import { validateXml } from '../../src/gridop/validate.js';
import { child, childrenNamed, parseXml, textOf } from '../../src/gridop/xml.js';
import { HAVE_XMLLINT } from '../support/xmllint.js';

const LFDI = '3E4F45AB31EDFE5B67E343E5E4562E31984E23E5';

describe("the site's readings as MirrorUsagePoints", () => {
  it('makes mRIDs of 128 bits ending in the PEN, the same for the same thing and different for another', () => {
    expect(clientMrid(LFDI, 'mup/site', 62345)).toMatch(/^[0-9A-F]{24}0000F389$/);
    expect(clientMrid(LFDI, 'mup/site', 62345)).toBe(clientMrid(LFDI, 'mup/site', 62345));
    expect(clientMrid(LFDI, 'mup/der', 62345)).not.toBe(clientMrid(LFDI, 'mup/site', 62345));
    expect(clientMrid(LFDI, 'mup/site', 0xffffffff).slice(24)).toBe('FFFFFFFF');
  });

  it('posts the average, maximum and minimum of the samples since the last post, scaled to whole numbers', () => {
    const m = new Mirror('site', LFDI, 1);
    expect(m.takeReadings(100, 400)).toBeUndefined();
    m.sample({ powerW: -1500, frequencyHz: 49.98, voltageL1V: Number.NaN }, 100);
    m.sample({ powerW: 500, frequencyHz: 50.04 }, 105);
    const list = parseXml(m.takeReadings(400, 700)!);
    expect(list.name).toBe('MirrorMeterReadingList');
    const readings = childrenNamed(list, 'MirrorMeterReading');
    // power and frequency, three statistics each; the voltage never had a number
    expect(readings).toHaveLength(6);
    const value = (key: string, stat: string) => {
      const r = readings.find((x) => textOf(x, 'mRID') === clientMrid(LFDI, `mup/site/${key}/${stat}`, 1))!;
      return Number(textOf(child(r, 'Reading'), 'value'));
    };
    expect([value('powerW', 'Avg'), value('powerW', 'Max'), value('powerW', 'Min')]).toEqual([-500, 500, -1500]);
    expect([value('frequencyHz', 'Avg'), value('frequencyHz', 'Max')]).toEqual([5001, 5004]);
    const period = child(child(readings[0], 'Reading'), 'timePeriod');
    expect([textOf(period, 'start'), textOf(period, 'duration')]).toEqual(['100', '300']);
    // a new interval starts empty
    expect(m.takeReadings(700, 1000)).toBeUndefined();
  });

  it.skipIf(!HAVE_XMLLINT)(
    'tells every quantity once, with its ReadingType, in a body the schemas accept',
    async () => {
      const body = new Mirror('der', LFDI, 62345).definitionBody();
      expect(await validateXml(body)).toEqual({ ok: true });
      const el = parseXml(body);
      expect(textOf(el, 'roleFlags')).toBe('0049');
      expect(childrenNamed(el, 'MirrorMeterReading')).toHaveLength(MIRROR_QUANTITIES.length * 3);
    },
  );
});
