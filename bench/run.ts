/**
 * `npm run bench`: runs every benchmark in bench/ one after another (each in its own process,
 * so one's heap and JIT state do not colour the next), prints their output as it comes, and ends
 * with one table that gathers every benchmark's result rows (the rows of the markdown tables they
 * print), so the figures and ratios of a run can be read in one place.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { arch, cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

function runOne(f: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', join(here, f)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      process.stdout.write(d);
    });
    p.on('exit', (code) => resolve({ code: code ?? 1, out }));
  });
}

/** data rows of the markdown tables a benchmark printed (header and separator rows left out) */
function resultRows(out: string): string[][] {
  const rows: string[][] = [];
  let inTable = false;
  for (const line of out.split('\n')) {
    if (!line.startsWith('|')) {
      inTable = false;
      continue;
    }
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    if (!inTable) {
      inTable = true; // the header
      continue;
    }
    if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
    rows.push(cells);
  }
  return rows;
}

let failed = 0;
const summary: string[] = [];
for (const f of files) {
  process.stdout.write(`\n## ${f}\n\n`);
  const { code, out } = await runOne(f);
  if (code !== 0) {
    failed++;
    summary.push(`| ${f} | FAILED (exit ${code}) | |`);
    continue;
  }
  for (const cells of resultRows(out))
    summary.push(`| ${f.replace(/\.ts$/, '')} | ${cells[0]} | ${cells.slice(1).join(' · ')} |`);
}
process.stdout.write(
  `\n## Summary: every benchmark's rows\n\n| benchmark | case | figures (and ratio to its baseline) |\n|---|---|---|\n${summary.join('\n')}\n`,
);
process.stdout.write(
  `\n${files.length - failed} of ${files.length} benchmarks ran; machine: ${arch()}, ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}\n`,
);
process.exit(failed ? 1 : 0);
