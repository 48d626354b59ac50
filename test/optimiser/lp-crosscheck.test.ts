/**
 * The optimiser against an independent LP solver (GLPK's glpsol) on the same cases, written as LP
 * files from the problem statement (lp-file.ts): 200 seeded 48-hour cases over the problem's corners
 * and one case per day of a synthetic year of day-ahead prices on the simulator's PV and load. Each
 * plan's cost must be within 0.5 % (or 0.01, whichever is larger) of glpsol's optimum — the solver
 * is exact, so it is held to 1e-6 as well — each plan must keep every rule slot by slot, and a case
 * glpsol finds infeasible must be refused as infeasible.
 *
 * 200 more cases carry the site's limits per slot (export, import and generation limits, scheduled
 * blocks of zero export) and negative export prices: the same bounds, and where a plan curtails PV
 * it must pay (the export at its limit, or a negative export price), never more than needed.
 *
 * The full set takes 25–45 s on the 2-core CI machine, so `npm test` runs a representative part:
 * the first 50 generated cases, the first 30 with limits and every 7th day of the year (each
 * season, weekdays and weekends alike). SITEGW_OPTIMISER_CHECK=full runs all 200, 200 and 366.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OptimiserCase } from '../../src/optimiser/case.js';
import { InfeasibleCaseError, solve } from '../../src/optimiser/solve.js';
import { dailyCase, limitedCase, needlessCurtailment, randomCase, violation } from './cases.js';
import { glpsol, requireGlpsol, scratchDir, twoAtATime } from './glpsol.js';

let scratch: ReturnType<typeof scratchDir>;
beforeAll(() => {
  requireGlpsol();
  scratch = scratchDir();
});
afterAll(() => scratch?.remove());

interface Outcome {
  name: string;
  lp: number | undefined;
  ours: number | undefined;
  problem: string | undefined;
}

async function check(c: OptimiserCase, name: string): Promise<Outcome> {
  const lp = await glpsol(c, scratch.dir, name);
  let ours: number | undefined;
  let problem: string | undefined;
  try {
    const sol = solve(c);
    ours = sol.cost;
    problem = violation(c, sol) ?? needlessCurtailment(c, sol);
  } catch (err) {
    if (!(err instanceof InfeasibleCaseError)) throw err;
  }
  return { name, lp: lp.feasible ? lp.cost : undefined, ours, problem };
}

function judge(outcomes: Outcome[]): { feasible: number; maxGap: number } {
  let maxGap = 0;
  let feasible = 0;
  for (const o of outcomes) {
    expect(o.problem, o.name).toBeUndefined();
    expect(o.ours === undefined, `${o.name}: infeasible for us and for glpsol alike`).toBe(o.lp === undefined);
    if (o.lp === undefined || o.ours === undefined) continue;
    feasible++;
    const gap = Math.abs(o.ours - o.lp);
    expect(gap, `${o.name}: ours ${o.ours}, glpsol ${o.lp}`).toBeLessThanOrEqual(
      Math.max(0.005 * Math.abs(o.lp), 0.01),
    );
    expect(gap, `${o.name}: ours ${o.ours}, glpsol ${o.lp}`).toBeLessThanOrEqual(1e-6 * (1 + Math.abs(o.lp)));
    maxGap = Math.max(maxGap, gap);
  }
  return { feasible, maxGap };
}

const full = process.env.SITEGW_OPTIMISER_CHECK === 'full';
const randomCount = full ? 200 : 50;
const limitedCount = full ? 200 : 30;
const days = Array.from({ length: 366 }, (_, d) => d).filter((d) => full || d % 7 === 0);

describe('optimiser against glpsol', () => {
  it(`${randomCount} generated 48-hour cases: same optimum, same infeasibility, every plan feasible`, async () => {
    const cases = Array.from({ length: randomCount }, (_, k) => randomCase(k));
    const outcomes = await twoAtATime(cases, (c, k) => check(c, `random-${k}`));
    const { feasible } = judge(outcomes);
    // the generator must exercise both sides: mostly feasible cases, some infeasible ones
    expect(feasible).toBeGreaterThan(0.6 * randomCount);
    expect(feasible).toBeLessThan(randomCount);
  }, 180_000);

  it(`${limitedCount} generated 48-hour cases with limits and negative export prices: same optimum, curtailing only where it pays`, async () => {
    const cases = Array.from({ length: limitedCount }, (_, k) => limitedCase(k));
    const outcomes = await twoAtATime(cases, (c, k) => check(c, `limited-${k}`));
    const { feasible } = judge(outcomes);
    expect(feasible).toBeGreaterThan(0.6 * limitedCount);
    // the limits and prices must make the plans curtail, or the new bounds were never exercised
    const curtailing = cases.filter((c, k) => {
      if (outcomes[k]!.ours === undefined) return false;
      return solve(c).slots.some((s) => s.curtailedW > 1);
    }).length;
    expect(curtailing).toBeGreaterThan(0.3 * limitedCount);
  }, 180_000);

  it(`${days.length} days of a year of day-ahead prices, one case a day: same optimum, every plan feasible`, async () => {
    const cases = days.map((d) => dailyCase(d));
    const { feasible } = judge(await twoAtATime(cases, (c, i) => check(c, `day-${days[i]}`)));
    expect(feasible).toBe(days.length);
  }, 180_000);
});
