/**
 * A folder of the test run, named in an environment variable that the workers and every process
 * they spawn inherit, and removed when the run ends. vitest runs a global setup once per project:
 * the first makes the folder, the others find it in the variable and keep it (folders nested
 * four deep took unix sockets' paths past their 107 bytes).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export interface RunFolder {
  /** the variable that names the folder */
  variable: string;
  /** where it is made */
  under: string;
  prefix: string;
  /** its mode, where others than this user pass through it */
  mode?: number;
  /** a variable pointed at the folder as well for the run (TMPDIR), and given back after */
  also?: string;
}

/** Makes the run's folder unless the variable names one already; the returned teardown removes the folder it made. */
export function openRunFolder(o: RunFolder): () => void {
  const set = process.env[o.variable];
  if (set && (!o.also || process.env[o.also] === set)) return () => {};
  const before = o.also ? process.env[o.also] : undefined;
  const dir = mkdtempSync(join(o.under, o.prefix));
  if (o.mode !== undefined) chmodSync(dir, o.mode);
  process.env[o.variable] = dir;
  if (o.also) process.env[o.also] = dir;
  return () => {
    rmSync(dir, { recursive: true, force: true });
    if (process.env[o.variable] === dir) delete process.env[o.variable];
    if (!o.also || process.env[o.also] !== dir) return;
    if (before === undefined) delete process.env[o.also];
    else process.env[o.also] = before;
  };
}
