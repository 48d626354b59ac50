// Reads the folder order from docs/design.md and the relative imports of src/, so the order written for
// people is the one the suite enforces: no second copy of the table lives in the test.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';

/** One place in the order: `row` is the table's position, `sub` orders the subfolders a row names. */
export interface Rank {
  row: number;
  sub: number;
  /** how a violation names it: the row's folder (`cli` for `cli.ts`), a subfolder, or a top-level file */
  name: string;
}

/** Keys are folders (`core`, `api/ws`) or top-level files of src/ (`main.ts`), as the table names them. */
export type FolderOrder = Map<string, Rank>;

export interface ImportEdge {
  file: string;
  line: number;
  specifier: string;
  target: string;
}

export interface Violation extends ImportEdge {
  from: string;
  to: string;
}

/** Parses the table under the `## Folder order` heading: the backticked names of the second column. */
export function parseFolderOrder(markdown: string): FolderOrder {
  const start = markdown.search(/^## Folder order\s*$/m);
  if (start < 0) throw new Error('docs/design.md has no "## Folder order" section');
  const rest = markdown.slice(start).split('\n').slice(1);
  const end = rest.findIndex((l) => l.startsWith('## '));
  const section = end < 0 ? rest : rest.slice(0, end);
  const order: FolderOrder = new Map();
  let row = 0;
  for (const line of section) {
    const cells = line.split('|').map((c) => c.trim());
    // | # | folder | why |  →  ['', '#', 'folder', 'why', '']
    const num = cells[1];
    const folderCell = cells[2];
    if (num === undefined || folderCell === undefined || !/^\d+$/.test(num)) continue;
    row += 1;
    if (Number(num) !== row) throw new Error(`Folder order row ${num} is out of sequence (expected ${row})`);
    const names = backticked(folderCell);
    const folder = names[0];
    if (folder === undefined) throw new Error(`Folder order row ${num} names no folder`);
    // the why column orders the row's subfolders: `api/` itself, then `api/ws`, then `api/http`
    const subfolders = backticked(cells[3] ?? '').filter((n) => n.startsWith(`${folder}/`));
    for (const name of names) place(order, name, { row, sub: 0, name: folder.endsWith('.ts') ? name : folder });
    subfolders.forEach((name, i) => place(order, name, { row, sub: i + 1, name }));
  }
  if (order.size === 0) throw new Error('the "Folder order" section has no table rows');
  return order;
}

function backticked(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => (m[1] ?? '').replace(/\/$/, ''));
}

function place(order: FolderOrder, name: string, rank: Rank): void {
  const placed = order.get(name);
  if (placed !== undefined && placed.row !== rank.row) throw new Error(`Folder order names ${name} in two rows`);
  // `api/` in the why column is the row's own folder, already placed with sub 0
  if (placed === undefined) order.set(name, rank);
}

/** The table key a path under src/ belongs to: its most specific named folder, or a named top-level file. */
export function folderOf(srcPath: string, order: FolderOrder): string | undefined {
  const parts = srcPath.split('/');
  if (parts.length === 1) {
    const file = parts[0] ?? '';
    if (order.has(file)) return file;
    // "Top-level files of src/ count as the folder named in the table": src/cli.ts is `cli`
    const base = file.replace(/\.ts$/, '');
    return order.has(base) ? base : undefined;
  }
  for (let n = parts.length - 1; n >= 1; n--) {
    const key = parts.slice(0, n).join('/');
    if (order.has(key)) return key;
  }
  return undefined;
}

function below(a: Rank, b: Rank): boolean {
  return a.row > b.row || (a.row === b.row && a.sub > b.sub);
}

/** A folder may import itself and anything above it; an import of a folder below it runs against the order. */
export function runsAgainst(from: string, to: string, order: FolderOrder): boolean {
  if (from === to) return false;
  const a = order.get(from);
  const b = order.get(to);
  if (a === undefined || b === undefined) return false;
  return below(b, a);
}

const STATIC = /^[ \t]*(?:import|export)\b[^;'"`]*?\bfrom\s*(['"])([^'"]+)\1/gm;
const SIDE_EFFECT = /^[ \t]*import\s*(['"])([^'"]+)\1/gm;
const DYNAMIC = /\bimport\s*\(\s*(['"`])([^'"`]+)\1\s*\)/g;

/** Every import specifier in a TypeScript source, with the line where its string stands. */
export function importsOf(source: string): { line: number; specifier: string }[] {
  const lineAt = (index: number) => source.slice(0, index).split('\n').length;
  const found: { index: number; specifier: string }[] = [];
  for (const re of [STATIC, SIDE_EFFECT]) {
    for (const m of source.matchAll(re)) {
      const spec = m[2] ?? '';
      found.push({ index: (m.index ?? 0) + m[0].length - spec.length - 1, specifier: spec });
    }
  }
  for (const m of source.matchAll(DYNAMIC)) {
    const index = m.index ?? 0;
    const lineStart = source.lastIndexOf('\n', index) + 1;
    const before = source.slice(lineStart, index).trimStart();
    // a dynamic import quoted in a comment is not an import
    if (before.startsWith('//') || before.startsWith('*') || before.startsWith('/*')) continue;
    found.push({ index, specifier: m[2] ?? '' });
  }
  return found.map((f) => ({ line: lineAt(f.index), specifier: f.specifier })).sort((a, b) => a.line - b.line);
}

export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out.sort();
}

/** Relative imports of every file under srcDir, as src-relative posix paths. */
export function relativeImports(srcDir: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const path of sourceFiles(srcDir)) {
    const file = relative(srcDir, path).split(sep).join('/');
    for (const { line, specifier } of importsOf(readFileSync(path, 'utf8'))) {
      if (!specifier.startsWith('./') && !specifier.startsWith('../')) continue;
      const target = relative(srcDir, resolve(dirname(path), specifier))
        .split(sep)
        .join('/');
      if (target.startsWith('..')) continue;
      edges.push({ file, line, specifier, target: posix.normalize(target) });
    }
  }
  return edges;
}

export function violations(edges: ImportEdge[], order: FolderOrder): Violation[] {
  const out: Violation[] = [];
  for (const edge of edges) {
    const from = folderOf(edge.file, order);
    const to = folderOf(edge.target.replace(/\.js$/, '.ts'), order);
    if (from === undefined || to === undefined || !runsAgainst(from, to, order)) continue;
    out.push({ ...edge, from: order.get(from)?.name ?? from, to: order.get(to)?.name ?? to });
  }
  return out;
}

export function describeViolation(v: Violation): string {
  return `src/${v.file}:${v.line} ${v.from} → ${v.to} (${v.specifier})`;
}
