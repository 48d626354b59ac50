/**
 * `sitegw optimise --input`: the plan JSON on stdout as docs/optimiser.md describes it, and one clear
 * line with exit 1 for a file that is not JSON, a case that does not match the schema, or a case
 * with no feasible plan; a missing file or option is a usage mistake (exit 2).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/index.js';
import { dailyCase } from './cases.js';

const dir = mkdtempSync(join(tmpdir(), 'sitegw-optimise-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function optimise(content: string | undefined, args: string[] = []) {
  const file = join(dir, `case-${Math.random().toString(36).slice(2)}.json`);
  if (content !== undefined) writeFileSync(file, content);
  let out = '';
  let err = '';
  const code = await main(['optimise', ...(args.length ? args : ['--input', file])], {
    out: (t) => (out += t),
    err: (t) => (err += t),
  });
  return { code, out, err };
}

describe('sitegw optimise', () => {
  it('prints the plan: one slot per case slot, modes, powers, SoC, cost below the baseline', async () => {
    const c = dailyCase(180);
    const { code, out, err } = await optimise(JSON.stringify(c));
    expect(err).toBe('');
    expect(code).toBe(0);
    const plan = JSON.parse(out);
    expect(Object.keys(plan)).toEqual(['slots', 'cost', 'baselineCost']);
    expect(plan.slots).toHaveLength(96);
    expect(plan.slots[0].interval).toBe(
      `${c.start.replace('.000Z', 'Z')}/${new Date(Date.parse(c.start) + 900_000).toISOString().replace('.000Z', 'Z')}`,
    );
    plan.slots.forEach((s: { curtailW?: number }, t: number) => {
      // PV is curtailed only where exporting it would cost: a case without limits curtails for nothing else
      if (s.curtailW !== undefined) expect(c.exportPrice[t]).toBeLessThan(0);
    });
    expect(plan.slots.some((s: { curtailW?: number }) => s.curtailW !== undefined)).toBe(
      c.exportPrice.some((p, t) => p < 0 && c.pvW[t]! > c.loadW[t]!),
    );
    for (const s of plan.slots) {
      expect(Object.keys(s).filter((k) => k !== 'curtailW')).toEqual(['interval', 'mode', 'powerW', 'socEnd']);
      expect(['charge', 'discharge', 'hold', 'self-consumption']).toContain(s.mode);
      expect(s.powerW).toBeGreaterThanOrEqual(0);
      expect(s.socEnd).toBeGreaterThanOrEqual(10 - 1e-9);
      expect(s.socEnd).toBeLessThanOrEqual(95 + 1e-9);
    }
    expect(plan.slots.at(-1).socEnd).toBeGreaterThanOrEqual(30 - 0.01);
    expect(plan.cost).toBeLessThan(plan.baselineCost);
  });

  it.each([
    ['not JSON', '{"start": ', /invalid case: .* is not JSON/],
    ['a case with a field missing', JSON.stringify({ ...dailyCase(1), grid: undefined }), /invalid case: \/grid/],
    ['an empty object', '{}', /invalid case: /],
    [
      'a case without a feasible plan',
      JSON.stringify({ ...dailyCase(1), loadW: dailyCase(1).loadW.map(() => 30000) }),
      /no feasible plan: slot 0: load 30000 W/,
    ],
  ])('%s: one line, exit 1', async (_, content, message) => {
    const { code, out, err } = await optimise(content);
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toMatch(message);
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(err).toMatch(/^sitegw optimise: /);
  });

  it('a missing file or a missing --input is a usage mistake', async () => {
    const missing = await optimise(undefined, ['--input', join(dir, 'nope.json')]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/cannot read .*nope\.json/);
    const noInput = await optimise(undefined, ['--inptu', 'x']);
    expect(noInput.code).toBe(2);
  });
});
