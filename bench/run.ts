/**
 * `npm run bench`: runs every benchmark in bench/ one after another (each in its own process,
 * so one's heap and JIT state do not colour the next) and prints their tables.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
let failed = 0;
for (const f of files) {
  process.stdout.write(`\n## ${f}\n\n`);
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', join(here, f)], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.stdout.write(`\n${files.length - failed} of ${files.length} benchmarks ran; machine: ${process.arch}, node ${process.version}\n`);
process.exit(failed ? 1 : 0);
