/**
 * The published example bodies of IEEE 2030.5 / CSIP-AUS resources (test/fixtures/gridop/README.md
 * names where each was published): each validates against sitegw's schemas as it does against
 * IEEE's and CSIP-AUS's own (the two that do not, do not there either), and reads to the values
 * written in it. The EndDevice examples also prove the SFDI rule: the SFDI each distributor printed
 * is the one src/gridop/identity.ts computes from the LFDI beside it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sfdiOf } from '../../src/gridop/identity.js';
import {
  readDefaultDerControl,
  readDerControlList,
  readDerProgramList,
  readDeviceCapability,
  readEndDevice,
  readEndDeviceList,
  readFsaList,
  readTime,
} from '../../src/gridop/resources.js';
import { validateXml } from '../../src/gridop/validate.js';
import { parseXml } from '../../src/gridop/xml.js';
import { HAVE_XMLLINT } from '../support/xmllint.js';

const DIR = new URL('../fixtures/gridop/published/', import.meta.url);
const body = (f: string) => readFileSync(new URL(f, DIR), 'utf8');
const read = (f: string) => parseXml(body(f));

/** the two published bodies whose element order breaks the schema (IEEE's and CSIP-AUS's too) */
const OUT_OF_ORDER: Record<string, RegExp> = {
  'getDerp_TESTPROG3_dderc.xml': /element opModEnergize: .*not expected/,
  'getEdev_csipaus.xml': /element ConnectionPointLink: .*not expected/,
};

describe.skipIf(!HAVE_XMLLINT)('published example bodies against the schemas', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.xml'));
  it.each(files)('%s', async (f) => {
    const v = await validateXml(body(f));
    const wrong = OUT_OF_ORDER[f];
    if (wrong) {
      expect(v.ok).toBe(false);
      expect(!v.ok && v.errors.join('\n')).toMatch(wrong);
    } else expect(v, f).toEqual({ ok: true });
  });
});

describe('published example bodies read', () => {
  it("SA Power Networks' DERControlList: three export limits, two cancelled", () => {
    const list = readDerControlList(read('getDerp_derc_sapn.xml'));
    expect(list).toMatchObject({ all: 3, results: 3 });
    expect(list.items.map((c) => [c.mRID.slice(0, 8), c.currentStatus, c.start, c.duration, c.base.exportW])).toEqual([
      ['F51DF423', 2, 1726632956, 300, 10000],
      ['1E0728FB', 2, 1726632962, 300, 10000],
      ['8F20816B', 1, 1726633063, 600, 0],
    ]);
    expect(list.items[0]).toMatchObject({
      replyTo: '/rsps/2dbac664c4e406e56169858ee224ca415849bc43/rsp',
      responseRequired: 3,
      randomizeStart: 0,
    });
  });

  it("SA Power Networks' DefaultDERControl: export 1500 W", () => {
    expect(readDefaultDerControl(read('getDerp_dderc_sapn.xml'))).toMatchObject({
      mRID: '03E42DBAC664C4E066E77A5D00054666',
      base: { exportW: 1500, unsupported: [] },
    });
  });

  it('a DERControlList with all four csipaus limits and powers of ten', () => {
    const [first, second] = readDerControlList(read('getDerp_TESTPROG3_derc.xml')).items;
    expect(first?.base).toEqual({ importW: 3512, exportW: 2512, generationW: 30000, loadW: 30000, unsupported: [] });
    expect(second?.base).toMatchObject({ importW: 2510, exportW: 2500 });
  });

  it('a DefaultDERControl whose opModEnergize comes after the csipaus limits is still read', () => {
    expect(readDefaultDerControl(read('getDerp_TESTPROG3_dderc.xml')).base).toEqual({
      importW: 1500,
      exportW: 1500,
      energize: true,
      unsupported: [],
    });
  });

  it('discovery, time, function set assignments and programs (Energy Queensland examples)', () => {
    expect(readDeviceCapability(read('getDcap.xml'))).toEqual({
      timeLink: { href: '/api/v2/tm' },
      endDeviceListLink: { href: '/api/v2/edev', all: 5 },
      mirrorUsagePointListLink: { href: '/api/v2/mup', all: 2 },
    });
    expect(readTime(read('getTm.xml'))).toEqual({ currentTime: 1682475024 });
    const fsa = readFsaList(read('getEdev__EQLDEV3_fsa.xml'));
    expect(fsa.items.map((f) => f.derProgramListLink?.href)).toEqual([
      '/api/v2/edev/_EQLDEV3/fsa/2/derp',
      '/api/v2/edev/_EQLDEV3/fsa/1/derp',
    ]);
    expect(readDerProgramList(read('getEdev__EQLDEV3_fsa_1_derp.xml'))).toMatchObject({
      pollRate: 301,
      items: [{ primacy: 102, derControlListLink: { href: '/api/v2/derp/P-_EQLDEV3/derc', all: 0 } }],
    });
  });

  it('the SFDI each published EndDevice carries is the one computed from its LFDI', () => {
    const eql = readEndDevice(read('getEdev__EQLDEV3.xml'));
    expect(eql).toMatchObject({ sfdi: '173034634270', fsaListLink: { href: '/api/v2/edev/_EQLDEV3/fsa' } });
    expect(sfdiOf(eql.lfdi!)).toBe(eql.sfdi);
    const list = readEndDeviceList(read('getEdev_csipaus.xml'));
    const withLfdi = list.items.filter((d) => /^[0-9A-F]{40}$/.test(d.lfdi ?? ''));
    expect(withLfdi.length).toBe(2);
    for (const d of withLfdi) expect(Number(sfdiOf(d.lfdi!))).toBe(Number(d.sfdi));
    expect(list.items[1]?.connectionPointLink).toEqual({ href: '/edev/1/cp' });
  });
});
