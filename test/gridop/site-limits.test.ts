/**
 * What the site-limits loop is handed for the operator's limits (src/gridop/limits.ts
 * siteLimitValues, docs/grid-operator.md "At the meter"): export, import and generation as they
 * are; a disconnect or de-energize, which sitegw has no switch for, as no generation and no export.
 */
import { describe, expect, it } from 'vitest';
import { type GridOperatorLimits, siteLimitValues } from '../../src/gridop/limits.js';

const base: GridOperatorLimits = { source: 'grid-operator', controlId: 'C1', kind: 'control', until: null };

describe('siteLimitValues', () => {
  it('passes export, import and generation through and leaves loadW out', () => {
    expect(siteLimitValues({ ...base, exportW: 1500, importW: 8000, generationW: 5000, loadW: 2000 })).toEqual({
      exportW: 1500,
      importW: 8000,
      generationW: 5000,
    });
  });

  it('asks nothing before the client has evaluated, or with nothing in force', () => {
    expect(siteLimitValues(undefined)).toEqual({});
    expect(siteLimitValues({ ...base, kind: 'none', controlId: null })).toEqual({});
  });

  it.each([
    ['connect', { connect: false }],
    ['energize', { energize: false }],
  ])('%s false: no generation and no export, over looser limits', (_, v) => {
    expect(siteLimitValues({ ...base, exportW: 3000, generationW: 6000, importW: 4000, ...v })).toEqual({
      exportW: 0,
      generationW: 0,
      importW: 4000,
    });
  });

  it('connect and energize true change nothing', () => {
    expect(siteLimitValues({ ...base, exportW: 3000, connect: true, energize: true })).toEqual({ exportW: 3000 });
  });
});
