import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  describeViolation,
  folderOf,
  importsOf,
  parseFolderOrder,
  relativeImports,
  runsAgainst,
  sourceFiles,
  violations,
} from './folder-order.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const srcDir = `${root}src`;
const order = parseFolderOrder(readFileSync(`${root}docs/design.md`, 'utf8'));

describe('the folder order table in docs/design.md', () => {
  it('is read in its written order, core first and cli last', () => {
    const ranks = [...order.values()];
    expect(ranks[0]?.name).toBe('core');
    expect(ranks.at(-1)?.name).toBe('cli');
    expect(order.get('version.ts')).toEqual(order.get('core'));
    expect(order.get('cli.ts')).toEqual(order.get('cli'));
    expect(order.get('main.ts')?.row).toBe(order.get('preflight.ts')?.row);
    expect(order.get('profiles')?.row).toBeLessThan(order.get('discovery')?.row ?? 0);
    expect(order.get('discovery')?.row).toBeLessThan(order.get('site')?.row ?? 0);
  });

  it('orders api itself above api/ws above api/http', () => {
    expect(runsAgainst('api/ws', 'api/http', order)).toBe(true);
    expect(runsAgainst('api', 'api/ws', order)).toBe(true);
    expect(runsAgainst('api/http', 'api/ws', order)).toBe(false);
    expect(runsAgainst('api/http', 'api', order)).toBe(false);
  });

  it('places every folder and top-level file under src/ (a new folder must be placed in the table)', () => {
    const unplaced = readdirSync(srcDir, { withFileTypes: true })
      .filter((e) => e.isDirectory() || e.name.endsWith('.ts'))
      .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
      .filter((name) => folderOf(name.endsWith('/') ? `${name}x.ts` : name, order) === undefined);
    expect(unplaced).toEqual([]);
    for (const file of sourceFiles(srcDir)) {
      const rel = file
        .slice(srcDir.length + 1)
        .split('\\')
        .join('/');
      expect(folderOf(rel, order), rel).toBeDefined();
    }
  });

  it('refuses a table whose rows are out of sequence', () => {
    const bad = '## Folder order\n\n| # | folder | why |\n|---:|---|---|\n| 1 | `core` | a |\n| 3 | `store` | b |\n';
    expect(() => parseFolderOrder(bad)).toThrow(/out of sequence/);
  });
});

describe('import scanning', () => {
  it('finds static, type-only, re-export, side-effect and dynamic imports with their lines', () => {
    const source = [
      "import { a } from './a.js';", // 1
      "import type { B } from '../b/b.js';", // 2
      'import {', // 3
      '  c,', // 4
      "} from './c.js';", // 5
      "export * from './d.js';", // 6
      "export { e } from './e.js';", // 7
      "import './f.js';", // 8
      "const g = await import('./g.js');", // 9
      "// const h = await import('./h.js');", // 10
      " * import('./i.js') quoted in a doc comment", // 11
      'const s = \'not an import from "./j.js"\';', // 12
    ].join('\n');
    expect(importsOf(source)).toEqual([
      { line: 1, specifier: './a.js' },
      { line: 2, specifier: '../b/b.js' },
      { line: 5, specifier: './c.js' },
      { line: 6, specifier: './d.js' },
      { line: 7, specifier: './e.js' },
      { line: 8, specifier: './f.js' },
      { line: 9, specifier: './g.js' },
    ]);
  });

  it('reports an import of a lower folder and allows one of a higher folder', () => {
    const edges = [
      { file: 'core/x.ts', line: 3, specifier: '../store/db.js', target: 'store/db.js' },
      { file: 'store/db.ts', line: 4, specifier: '../core/log.js', target: 'core/log.js' },
      { file: 'cli.ts', line: 5, specifier: './main.js', target: 'main.js' },
      { file: 'main.ts', line: 6, specifier: './cli.js', target: 'cli.js' },
    ];
    expect(violations(edges, order).map(describeViolation)).toEqual([
      'src/core/x.ts:3 core → store (../store/db.js)',
      'src/main.ts:6 main.ts → cli (./cli.js)',
    ]);
  });
});

describe('src/ follows the folder order', () => {
  it('has no import that runs against it', () => {
    const edges = relativeImports(srcDir);
    // a scan that found nothing would pass vacuously
    expect(edges.length).toBeGreaterThan(100);
    expect(violations(edges, order).map(describeViolation)).toEqual([]);
  });
});
