/**
 * An install on the oldest Node the project promises (package.json engines: 20.19) warns about no
 * runtime dependency's engines: every package the lockfile installs outside the dev tree accepts
 * that Node, or is named below with the reason its range is not a problem. npm's EBADENGINE
 * warnings come from exactly these ranges.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const OLDEST = '20.19.0';

/**
 * Runtime packages whose engines exclude Node 20 on purpose, and why that is right:
 * better-sqlite3 13 is the driver on Node 22 and later; on Node 20 the gateway loads its optional
 * alias better-sqlite3-node20 (better-sqlite3 12) instead (src/store/, docs/install.md), so 13 is
 * installed there but never loaded. Its range is its real need: 13 builds against V8 APIs Node 20 lacks.
 */
const EXCEPTIONS = new Map([['node_modules/better-sqlite3', 'loaded on Node >= 22 only (src/store driver choice)']]);

type V = [number, number, number];
const parse = (v: string): V => {
  const [a = 0, b = 0, c = 0] = v
    .replace(/^v/, '')
    .split('.')
    .map((x) => (x === 'x' || x === '*' ? 0 : Number(x)));
  return [a, b, c];
};
const cmp = (a: V, b: V) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** Whether `version` satisfies an npm range of the forms lockfiles carry (||, >=, >, <, <=, ^, ~, x, exact). */
function satisfies(version: string, range: string): boolean {
  const v = parse(version);
  return range.split('||').some((alt) =>
    alt
      .trim()
      // '>= 16.0.0' is one comparator
      .replace(/(>=|<=|>|<|\^|~|=)\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean)
      .every((c) => {
        const m = /^(>=|<=|>|<|\^|~|=)?\s*v?([\dx*]+(?:\.[\dx*]+)*)$/.exec(c);
        if (!m) return c === '*';
        const [op = '=', text] = [m[1], m[2]!];
        const t = parse(text);
        const parts = text.split('.').filter((p) => p !== 'x' && p !== '*').length;
        switch (op) {
          case '>=':
            return cmp(v, t) >= 0;
          case '>':
            return cmp(v, t) > 0;
          case '<=':
            return cmp(v, t) <= 0;
          case '<':
            return cmp(v, t) < 0;
          case '^':
            return (
              cmp(v, t) >= 0 && (t[0] > 0 ? v[0] === t[0] : t[1] > 0 ? v[1] === t[1] && v[0] === 0 : cmp(v, t) === 0)
            );
          case '~':
            return cmp(v, t) >= 0 && v[0] === t[0] && (parts < 2 || v[1] === t[1]);
          default:
            // 20.x, 20, 20.19.0
            return v.slice(0, parts).every((n, i) => n === t[i]);
        }
      }),
  );
}

describe('runtime dependencies accept the oldest promised Node', () => {
  it('the range reader agrees with npm on the forms the lockfile uses', () => {
    expect(satisfies('20.19.0', '>=22')).toBe(false);
    expect(satisfies('20.19.0', '^20.19.0 || >=22.14.0')).toBe(true);
    expect(satisfies('20.19.0', '20.x || 22.x')).toBe(true);
    expect(satisfies('20.19.0', '>=18')).toBe(true);
    expect(satisfies('20.19.0', '^12.22 || ^14.13 || >=16')).toBe(true);
    expect(satisfies('20.19.0', '>=22.19.0')).toBe(false);
    expect(satisfies('20.19.0', '^18')).toBe(false);
    expect(satisfies('20.19.0', '>= 16.0.0')).toBe(true);
  });

  it(`no package installed outside the dev tree excludes Node ${OLDEST}, but the named exceptions`, () => {
    const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
      packages: Record<string, { dev?: boolean; engines?: Record<string, string> | string[]; version?: string }>;
    };
    const refused: string[] = [];
    for (const [path, p] of Object.entries(lock.packages)) {
      if (path === '' || p.dev || EXCEPTIONS.has(path)) continue;
      const node = Array.isArray(p.engines) ? undefined : p.engines?.node;
      if (node && !satisfies(OLDEST, node)) refused.push(`${path}@${p.version} wants node ${node}`);
    }
    expect(refused).toEqual([]);
  });
});
