/**
 * A small seeded generator of malformed input for the fuzz suites. Seeded (mulberry32), so a
 * failing case is reproduced by its seed and index; SITEGW_FUZZ_SEED picks another seed and
 * SITEGW_FUZZ_SCALE multiplies the case counts for a long run. A hand-written one rather than a
 * property-testing library: the suites need mutation of known-good inputs (query strings, forms,
 * YAML, JSON), not shrinking, and a few dozen lines cover it.
 */
import { createHash } from 'node:crypto';
import type { Database } from 'better-sqlite3';

export const SEED = Number(process.env.SITEGW_FUZZ_SEED ?? 20260901);
export const SCALE = Math.max(1, Number(process.env.SITEGW_FUZZ_SCALE ?? 1));

export type Rng = () => number;

export function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const int = (r: Rng, n: number): number => Math.floor(r() * n);
export const pick = <T>(r: Rng, xs: readonly T[]): T => xs[int(r, xs.length)]!;

/** Strings that have broken parsers before: edges of numbers, dates, encodings and lengths. */
const NASTY = [
  '',
  ' ',
  '%',
  '%00',
  '%zz',
  '\u0000',
  '\uffff',
  '\ud800',
  '😀',
  '..',
  '../../etc/passwd',
  '/',
  '//',
  '?',
  '&',
  '=',
  '#',
  'null',
  'undefined',
  'true',
  'NaN',
  'Infinity',
  '-1',
  '0',
  '1e309',
  '-0',
  '9007199254740993',
  '0x10',
  '1'.repeat(400),
  '2026-02-30T00:00:00Z',
  '2026-11-01T00:00:00Z/P0D',
  'P1D/P1D',
  '/',
  '2026-11-01T00:00:00+25:00/PT1H',
  'PT-15M',
  'P1M',
  'PT15M,PT1H',
  '{"a":1}',
  '[]',
  '[[[[[[[[[[',
  '"',
  "'",
  '<script>',
  '\\',
  'a'.repeat(9000),
  'default,,energy',
  'energy,energy',
  '__proto__',
  'constructor',
];

const CHARSET = 'abcXYZ019-_:./%+,&=?#[]{}"\'\\ \t\n\u00e9\u4e2d';

export function junk(r: Rng, max = 40): string {
  switch (int(r, 4)) {
    case 0:
      return pick(r, NASTY);
    case 1:
      return Array.from({ length: int(r, max) }, () => CHARSET[int(r, CHARSET.length)]).join('');
    case 2:
      return String.fromCharCode(...Array.from({ length: int(r, max) }, () => int(r, 0x10000)));
    default:
      return pick(r, NASTY) + pick(r, NASTY);
  }
}

/** One edit of a known-good string: a character dropped, doubled, swapped, or junk put in. */
export function mutate(r: Rng, s: string): string {
  const i = int(r, s.length + 1);
  switch (int(r, 6)) {
    case 0:
      return s.slice(0, i) + s.slice(i + 1);
    case 1:
      return s.slice(0, i) + s.slice(i, i + 1 + int(r, 8)).repeat(2 + int(r, 3)) + s.slice(i + 1 + int(r, 8));
    case 2:
      return s.slice(0, i) + junk(r, 8) + s.slice(i);
    case 3:
      return s.slice(0, i) + String.fromCharCode(int(r, 128)) + s.slice(i + 1);
    case 4:
      return s.slice(0, i);
    default:
      return s.slice(i) + s.slice(0, i);
  }
}

/** encodeURIComponent that takes lone surrogates too (they become U+FFFD, as a browser sends them) */
export const enc = (s: string): string =>
  encodeURIComponent(s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));

export function mutateN(r: Rng, s: string, maxEdits = 3): string {
  let out = s;
  for (let k = 1 + int(r, maxEdits); k > 0; k--) out = mutate(r, out);
  return out;
}

/** A random JSON value, nested a little: for request bodies. */
export function jsonJunk(r: Rng, depth = 0): unknown {
  switch (int(r, depth > 2 ? 4 : 7)) {
    case 0:
      return junk(r);
    case 1:
      return pick(r, [0, -1, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2]);
    case 2:
      return pick(r, [null, true, false]);
    case 3:
      return '';
    case 4:
      return Array.from({ length: int(r, 4) }, () => jsonJunk(r, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: int(r, 4) }, () => [
          pick(r, [
            'publishTo',
            'clientId',
            'data',
            'name',
            'currency',
            'timezone',
            'values',
            'interval',
            'importPrice',
            '__proto__',
            junk(r, 6),
          ]),
          jsonJunk(r, depth + 1),
        ]),
      );
  }
}

/** What must not change while the fuzzers knock on the doors: the measured data and the sharing settings. */
export function storedChecksum(db: Database): string {
  const h = createHash('sha256');
  for (const sql of [
    'SELECT * FROM buckets_all ORDER BY stream, start_s',
    'SELECT * FROM streams ORDER BY id',
    'SELECT * FROM publish_to',
    'SELECT * FROM grid_events',
  ]) {
    for (const row of db.prepare(sql).raw().all()) h.update(JSON.stringify(row));
    h.update('|');
  }
  return h.digest('hex');
}

/** Counts by outcome, printed as one line at the end of a suite. */
export class Tally {
  readonly counts = new Map<string, number>();
  total = 0;
  add(outcome: string): void {
    this.total++;
    this.counts.set(outcome, (this.counts.get(outcome) ?? 0) + 1);
  }
  line(what: string): string {
    const parts = [...this.counts.entries()].sort().map(([k, v]) => `${k}: ${v}`);
    return `[fuzz] ${what}: ${this.total} cases (seed ${SEED}) — ${parts.join(', ')}`;
  }
}
