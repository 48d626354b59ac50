/** The strict exposition-format parser the metrics tests read /metrics with: it refuses what a scraper would misread. */
import { describe, expect, it } from 'vitest';
import { parsePromText, sampleOf } from '../support/prom-text.js';

describe('parsePromText', () => {
  it('reads families, escaped label values and special values', () => {
    const f = parsePromText(
      [
        '# HELP a_total Things\\n counted \\\\ here',
        '# TYPE a_total counter',
        'a_total{x="q\\"uo\\\\te\\nnl",y=""} 3 1700000000000',
        '# TYPE h histogram',
        'h_bucket{le="+Inf"} 2',
        'h_sum 1.5e-3',
        'h_count 2',
        'g Nan',
        'i -Inf',
        '',
      ].join('\n'),
    );
    expect(f.get('a_total')).toMatchObject({ type: 'counter', help: 'Things\n counted \\ here' });
    expect(f.get('a_total')!.samples[0]).toEqual({
      name: 'a_total',
      labels: { x: 'q"uo\\te\nnl', y: '' },
      value: 3,
      timestampMs: 1700000000000,
    });
    expect(f.get('h')!.samples.map((s) => s.name)).toEqual(['h_bucket', 'h_sum', 'h_count']);
    expect(sampleOf(f, 'h_sum', {})).toBe(0.0015);
    expect(sampleOf(f, 'g', {})).toBeNaN();
    expect(sampleOf(f, 'i', {})).toBe(-Infinity);
  });

  it.each([
    ['no final line feed', 'a 1'],
    ['a value that is no number', 'a one\n'],
    ['a hex value', 'a 0x10\n'],
    ['a bad escape', 'a{x="\\t"} 1\n'],
    ['an unterminated label value', 'a{x="1} 1\n'],
    ['a label twice', 'a{x="1",x="2"} 1\n'],
    ['a series twice', 'a{x="1"} 1\na{x="1"} 2\n'],
    ['TYPE after samples', 'a 1\n# TYPE a gauge\n'],
    ['an unknown type', '# TYPE a meter\n'],
    ['a negative counter', '# TYPE a_total counter\na_total -1\n'],
    ['two spaces', 'a  1\n'],
    ['a bad timestamp', 'a 1 soon\n'],
    ['a signed NaN', 'a -NaN\n'],
  ])('refuses %s', (_what, text) => {
    expect(() => parsePromText(text)).toThrow();
  });
});
