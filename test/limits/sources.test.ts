/**
 * The sources and the rule (src/limits/sources.ts, docs/limits.md "Sources"): the most restrictive
 * value of each limit is in force, credited to the first source of the list on a tie; a new source
 * (the grid operator's client) joins by name; the price source curtails export while the tariff's
 * export price is below 0.
 */
import { describe, expect, it } from 'vitest';
import { priceSource } from '../../src/limits/price.js';
import { LIMIT_SOURCES, SiteLimits } from '../../src/limits/sources.js';
import { openDatabase } from '../../src/store/db.js';
import { siteConfig } from '../tariffs/fixture.js';

const T0 = Date.parse('2026-06-21T10:00:00Z');

describe('the limits in force', () => {
  it('the lowest of each limit wins, a tie is credited to the first source of the list', () => {
    const l = new SiteLimits();
    l.add({ name: 'site.yaml', at: () => ({ exportW: 5000, importW: 11000 }) });
    l.add({ name: 'schedule', at: (now) => (now >= T0 ? { exportW: 0, importW: 11000 } : {}) });
    expect(l.inForce(T0 - 1)).toEqual({
      exportW: { watts: 5000, source: 'site.yaml' },
      importW: { watts: 11000, source: 'site.yaml' },
    });
    expect(l.inForce(T0)).toEqual({
      exportW: { watts: 0, source: 'schedule' },
      importW: { watts: 11000, source: 'site.yaml' },
    });
  });

  it('the grid operator joins by name, and leaves', () => {
    const l = new SiteLimits();
    l.add({ name: 'site.yaml', at: () => ({ exportW: 5000 }) });
    expect(LIMIT_SOURCES).toContain('grid-operator');
    l.add({ name: 'grid-operator', at: () => ({ exportW: 1500, generationW: 0 }) });
    expect(l.inForce(T0)).toEqual({
      exportW: { watts: 1500, source: 'grid-operator' },
      generationW: { watts: 0, source: 'grid-operator' },
    });
    l.remove('grid-operator');
    expect(l.inForce(T0)).toEqual({ exportW: { watts: 5000, source: 'site.yaml' } });
  });

  it('a negative export price curtails export with curtail, not with ignore, nor without a tariff', () => {
    const db = openDatabase(':memory:');
    const negative = ['tariff:', '  type: flat', '  importPrice: 0.3', '  exportPrice: -0.01'];
    expect(priceSource(db, siteConfig(negative))!.at(T0)).toEqual({ exportW: 0 });
    expect(priceSource(db, siteConfig([...negative, 'limits:', '  negativeExportPrice: ignore']))).toBeNull();
    expect(priceSource(db, siteConfig([]))).toBeNull();
    const positive = ['tariff:', '  type: flat', '  importPrice: 0.3', '  exportPrice: 0.08'];
    expect(priceSource(db, siteConfig(positive))!.at(T0)).toEqual({});
  });
});
