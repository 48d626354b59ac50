import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { UNIT_FORBIDDEN } from '../projects.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const rel = (file: string) => relative(ROOT, file).split('\\').join('/');

function testFilesOnDisk(): string[] {
  return readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `test/${f.split('\\').join('/')}`)
    .sort();
}

/** the project of every test file as vitest itself resolves the config */
async function vitestProjects(): Promise<{ file: string; project: string }[]> {
  const bin = join(ROOT, 'node_modules/vitest/vitest.mjs');
  const { stdout } = await promisify(execFile)(process.execPath, [bin, 'list', '--filesOnly', '--json'], {
    cwd: ROOT,
    maxBuffer: 16 << 20,
  });
  const listed = JSON.parse(stdout) as { file: string; projectName?: string }[];
  return listed.map((x) => ({ file: rel(x.file), project: x.projectName ?? '(none)' }));
}

/** a file's own text and that of the test/ helpers it imports, transitively */
function textWithHelpers(file: string, seen = new Set<string>()): string {
  if (seen.has(file)) return '';
  seen.add(file);
  // a type-only import runs nothing
  const text = readFileSync(join(ROOT, file), 'utf8').replace(/^import type [^;]*;/gm, '');
  const helpers = [...text.matchAll(/^import (?!type )[^;]*? from '(\.{1,2}\/[^']+)\.js'/gm)]
    .map((m) => rel(resolve(ROOT, dirname(file), `${m[1]}.ts`)))
    .filter((f) => f.startsWith('test/'));
  return [text, ...helpers.map((h) => textWithHelpers(h, seen))].join('\n');
}

describe('vitest projects (test/projects.ts)', () => {
  it('puts every test file in exactly one of unit, e2e and slow', async () => {
    const listed = await vitestProjects();
    const byFile = new Map<string, string[]>();
    for (const { file, project } of listed) byFile.set(file, [...(byFile.get(file) ?? []), project]);
    const wrong = testFilesOnDisk()
      .map((file) => ({ file, projects: byFile.get(file) ?? [] }))
      .filter((x) => x.projects.length !== 1);
    expect(wrong).toEqual([]);
    expect(new Set(listed.map((x) => x.project))).toEqual(new Set(['unit', 'e2e', 'slow']));
  });

  it('keeps daemons, servers, brokers and child processes out of the unit project', async () => {
    const units = (await vitestProjects()).filter((x) => x.project === 'unit').map((x) => x.file);
    expect(units.length).toBeGreaterThan(0);
    const offenders = units
      .map((file) => ({ file, found: UNIT_FORBIDDEN.filter((re) => re.test(textWithHelpers(file))).map(String) }))
      .filter((x) => x.found.length > 0);
    expect(offenders).toEqual([]);
  });
});
