import { describe, expect, it } from 'vitest';
import { GridOpError } from '../../src/gridop/errors.js';
import { readDefaultDerControl, readDerControlList, readTime } from '../../src/gridop/resources.js';
import { parseXml } from '../../src/gridop/xml.js';

const NS = 'xmlns="urn:ieee:std:2030.5:ns" xmlns:csipaus="https://csipaus.org/ns"';
const dderc = (base: string) =>
  parseXml(`<DefaultDERControl ${NS}><mRID>AB</mRID><DERControlBase>${base}</DERControlBase></DefaultDERControl>`);
const named = (f: () => unknown, message: RegExp) => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(GridOpError);
    expect((e as GridOpError).code).toBe('GRIDOP_INVALID_XML');
    expect((e as Error).message).toMatch(message);
    return;
  }
  throw new Error(`no error, expected ${message}`);
};

describe('resource readers refuse values they cannot use, by name', () => {
  it('reads ActivePower as value × 10^multiplier and lists the opMods sitegw does not carry out', () => {
    const c = readDefaultDerControl(
      dderc(
        '<opModFixedW>50</opModFixedW><opModTargetW><multiplier>0</multiplier><value>1</value></opModTargetW>' +
          '<csipaus:opModExpLimW><multiplier>-1</multiplier><value>15005</value></csipaus:opModExpLimW>',
      ),
    );
    expect(c.base).toEqual({ exportW: 1500.5, unsupported: ['opModFixedW', 'opModTargetW'] });
  });

  it('names a multiplier out of range, a number that is not one, a boolean that is not one', () => {
    named(
      () =>
        readDefaultDerControl(
          dderc('<csipaus:opModExpLimW><multiplier>12</multiplier><value>1</value></csipaus:opModExpLimW>'),
        ),
      /multiplier 12 is outside -9..9/,
    );
    named(
      () =>
        readDefaultDerControl(
          dderc('<csipaus:opModImpLimW><multiplier>0</multiplier><value>1e3</value></csipaus:opModImpLimW>'),
        ),
      /opModImpLimW.value is not a whole number: '1e3'/,
    );
    named(() => readDefaultDerControl(dderc('<opModConnect>yes</opModConnect>')), /opModConnect is not a boolean/);
    named(
      () => readTime(parseXml(`<Time ${NS}><currentTime>soon</currentTime></Time>`)),
      /currentTime is not a whole number/,
    );
    named(
      () => readDerControlList(parseXml(`<DERControlList ${NS} all="x" results="0"/>`)),
      /@all is not a whole number/,
    );
    named(
      () => readDefaultDerControl(parseXml(`<DefaultDERControl ${NS}><mRID>AB</mRID></DefaultDERControl>`)),
      /no DERControlBase/,
    );
  });
});
