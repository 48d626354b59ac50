/**
 * `sitegw optimise --input -` as a process: the case from stdin, the plan on stdout, exit 0; bytes
 * that are not JSON on stdin end with one line naming stdin and exit 1.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { dailyCase } from '../optimiser/cases.js';
import { sitegwCommand } from '../support/cli.js';

const optimise = (input: string) => {
  const [cmd, args] = sitegwCommand(['optimise', '--input', '-']);
  return spawnSync(cmd, args, { input, encoding: 'utf8', timeout: 60_000 });
};

describe('sitegw optimise --input -', () => {
  it('reads the case from stdin and prints the plan', () => {
    const r = optimise(JSON.stringify(dailyCase(200)));
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan.slots).toHaveLength(96);
    expect(plan.cost).toBeLessThanOrEqual(plan.baselineCost);
  });

  it('bytes that are not JSON: one line, exit 1', () => {
    const r = optimise('\u0000\u00ff{"start"');
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^sitegw optimise: invalid case: stdin is not JSON: .*\n$/);
  });
});
