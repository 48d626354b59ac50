/**
 * GLPK's glpsol (Debian package glpk-utils) as the independent solver: the case as a CPLEX LP file,
 * solved by its simplex, the optimum read from its raw solution file (`s bas ROWS COLS pst dst obj`).
 * Without glpsol the checks fail and say how to install it; they never pass without it.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { OptimiserCase } from '../../src/optimiser/case.js';
import { lpFile } from './lp-file.js';

const run = promisify(execFile);

export function requireGlpsol(): void {
  try {
    execFileSync('glpsol', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('glpsol not found: apt-get install glpk-utils (listed in .ci/run DEBIAN_PACKAGES)');
  }
}

export type LpAnswer = { feasible: true; cost: number } | { feasible: false };

export async function glpsol(c: OptimiserCase, dir: string, name: string): Promise<LpAnswer> {
  const lp = join(dir, `${name}.lp`);
  const sol = join(dir, `${name}.sol`);
  writeFileSync(lp, lpFile(c));
  await run('glpsol', ['--lp', lp, '-w', sol]);
  const line = readFileSync(sol, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('s bas '));
  if (!line) throw new Error(`glpsol wrote no solution line for ${name}`);
  const [, , , , pst, , obj] = line.split(/\s+/);
  // pst: f feasible, n no feasible solution, i infeasible (for a basic solution that is not optimal)
  if (pst !== 'f') return { feasible: false };
  return { feasible: true, cost: (Number(obj) * c.slotMinutes) / 60 / 1000 };
}

/** Runs the jobs two at a time (the machine has two cores). */
export async function twoAtATime<T, R>(items: T[], job: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await job(items[i]!, i);
    }
  };
  await Promise.all([worker(), worker()]);
  return out;
}

export function scratchDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'sitegw-lp-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
