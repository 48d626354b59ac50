/**
 * The time fault harness's long run (test/e2e/clock-invariants.test.ts; docs/design.md "How
 * fault-prone code is tested: invariants under random faults"): FAULT_SEEDS seeds (default 3) of
 * FAULT_STEPS faults (default 12) against the real daemon under libfaketime and a real mosquitto.
 * Prints one row per seed (the faults, the invariant checks passed, or the failure and its
 * `SEED=…` to replay) and the totals. No speed figure: what it measures is what held.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const seeds = process.env.FAULT_SEEDS ?? '3';
const steps = process.env.FAULT_STEPS ?? '12';

const out = await new Promise<string>((resolve) => {
  const p = spawn('npx', ['vitest', 'run', 'test/e2e/clock-invariants.test.ts'], {
    cwd: root,
    env: { ...process.env, FAULT_SEEDS: seeds, FAULT_STEPS: steps },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  p.stdout.on('data', (d: Buffer) => (text += d.toString()));
  p.stderr.on('data', (d: Buffer) => (text += d.toString()));
  p.on('exit', () => resolve(text));
});

const plain = out.replace(/\u001b\[[0-9;]*m/g, '');
const passed = [...plain.matchAll(/clock faults SEED=(\d+): (.+); (\d+) checks passed/g)];
const failed = [...plain.matchAll(/clock faults failed: SEED=(\d+).*\nfaults: (.+)\n(.+)/g)];
console.log(`\n## Clock faults: ${seeds} seeds × ${steps} faults\n`);
console.log('| seed | faults | invariant checks | outcome |');
console.log('|---|---:|---:|---|');
for (const m of passed) console.log(`| ${m[1]} | ${m[2]!.split(' → ').length} | ${m[3]} | held |`);
for (const m of failed) console.log(`| ${m[1]} | ${m[2]!.split(' → ').length} | – | FAILED: ${m[3]!.slice(0, 200)} |`);
const faults = passed.reduce((n, m) => n + m[2]!.split(' → ').length, 0);
const checks = passed.reduce((n, m) => n + Number(m[3]), 0);
console.log(`\n${passed.length} seeds held (${faults} faults, ${checks} checks), ${failed.length} failed`);
if (failed.length > 0 || passed.length === 0) process.exitCode = 1;
