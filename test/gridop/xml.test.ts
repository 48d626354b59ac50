import { describe, expect, it } from 'vitest';
import { validateXml } from '../../src/gridop/validate.js';
import { child, parseXml, SEP_NS, writeXml, XmlError } from '../../src/gridop/xml.js';
import { HAVE_XMLLINT } from '../support/xmllint.js';

describe('the XML reader', () => {
  it('resolves default and prefixed namespaces, entities, CDATA and comments', () => {
    const el = parseXml(
      `<?xml version="1.0"?>\n<!-- c --><a xmlns="${SEP_NS}" xmlns:c="https://csipaus.org/ns" href="/x?a=1&amp;b=2">` +
        '<c:b>1 &lt; 2 &#x41;&#66;</c:b><d><![CDATA[<raw>]]></d><e/></a>',
    );
    expect(el).toMatchObject({ ns: SEP_NS, name: 'a', attrs: { href: '/x?a=1&b=2' } });
    expect(child(el, 'b', 'https://csipaus.org/ns')?.text).toBe('1 < 2 AB');
    expect(child(el, 'd')?.text).toBe('<raw>');
    expect(child(el, 'e')).toMatchObject({ name: 'e', children: [] });
  });

  it('names what is not well-formed, with its line', () => {
    const cases: [string, RegExp][] = [
      ['<a>\n<b></a>', /<\/a> closes <b> \(line 2\)/],
      ['<a x=1/>', /not quoted/],
      ['<a>&bogus;</a>', /unknown entity/],
      ['<p:a/>', /undeclared namespace prefix p/],
      ['<!DOCTYPE a [<!ENTITY x "y">]><a/>', /DOCTYPE/],
      ['<a/><b/>', /content after the document element/],
      ['<a>', /not closed/],
      ['', /expected an element/],
      [`${'<a>'.repeat(40)}${'</a>'.repeat(40)}`, /nested deeper/],
    ];
    for (const [text, message] of cases) expect(() => parseXml(text), text).toThrow(message);
  });

  it('throws only XmlError for any cut or changed byte of a body (seeded)', () => {
    const body = writeXml([
      'DERControl',
      { xmlns: SEP_NS, href: '/d/1' },
      ['mRID', {}, 'AB'],
      ['interval', {}, ['start', {}, 5], ['duration', {}, 6]],
    ]);
    let seed = 43;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    const junk = '<>/&;="\' x:';
    for (let n = 0; n < 2000; n++) {
      const at = Math.floor(rnd() * body.length);
      const mutated =
        rnd() < 0.5
          ? body.slice(0, at)
          : body.slice(0, at) + junk[Math.floor(rnd() * junk.length)] + body.slice(at + 1);
      try {
        parseXml(mutated);
      } catch (e) {
        expect(e, mutated).toBeInstanceOf(XmlError);
      }
    }
  });

  it('writes escaped text and attributes and leaves out undefined parts', () => {
    expect(writeXml(['a', { x: 'q"<', y: undefined }, ['b', {}, 'A & B'], undefined])).toBe(
      '<a x="q&quot;&lt;"><b>A &amp; B</b></a>',
    );
  });
});

describe.skipIf(!HAVE_XMLLINT)('validation against the schemas (xmllint)', () => {
  it('accepts a valid body and names the line and element of an invalid one', async () => {
    const ok = await validateXml(
      `<Time xmlns="${SEP_NS}"><currentTime>1</currentTime><dstEndTime>0</dstEndTime><dstOffset>0</dstOffset>` +
        '<dstStartTime>0</dstStartTime><quality>7</quality><tzOffset>36000</tzOffset></Time>',
    );
    expect(ok).toEqual({ ok: true });
    const bad = await validateXml(`<Time xmlns="${SEP_NS}">\n<currentTime>soon</currentTime></Time>`);
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.errors[0]).toMatch(/^line 2: element currentTime: .*'soon' is not a valid value/);
    const broken = await validateXml('<Time');
    expect(!broken.ok && broken.errors.join('\n')).toMatch(/parser error/);
  });
});
