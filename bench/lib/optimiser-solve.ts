/**
 * Child of bench/optimiser.ts, started with the unit's node flags: builds a 48-hour case (192 slots)
 * and, with `solve` as argument, solves it `runs` times; with `policy`, makes the daemon's plan on
 * the load's spread (policy-plan.ts) from 20 simulated days' loads per slot `runs` times. Prints
 * the median time and the process's peak RSS as JSON. The peak RSS of a run with `none` (or, for
 * `policy`, `samples`: the samples built, no plan) is the baseline the extra memory is measured
 * against (same modules, same case). `solve-limits` solves the same case with a connection's limits
 * (test/optimiser/cases.ts limitedDailyCase).
 */
import { parseCase } from '../../src/optimiser/case.js';
import { optimise } from '../../src/optimiser/plan.js';
import { policyPlan } from '../../src/optimiser/policy-plan.js';
import { defaultSimConfig } from '../../src/sim/config.js';
import { HouseLoad } from '../../src/sim/house-load.js';
import { dailyCase, limitedDailyCase } from '../../test/optimiser/cases.js';
import { median } from './stats.js';

const [mode = 'solve', runsArg = '15'] = process.argv.slice(2);
const c = parseCase(mode === 'solve-limits' ? limitedDailyCase(172, 2024, 2) : dailyCase(172, 2024, 2));
const times: number[] = [];
let cost = 0;
/** the simulated house's load in each slot on each of the 20 days before: the samples the daemon reads */
function samplesOf(): number[][] {
  const sim = defaultSimConfig();
  const house = new HouseLoad(sim.house, sim.seed, sim.location.timezone);
  const start = Date.parse(c.start);
  return c.loadW.map((_, t) =>
    Array.from({ length: 20 }, (_, d) => {
      let w = 0;
      for (let m = 0; m < 15; m++) w += house.demandW(start + t * 900_000 - (d + 1) * 86_400_000 + m * 60_000 + 30_000);
      return w / 15;
    }),
  );
}
const samples = mode === 'policy' || mode === 'samples' ? samplesOf() : [];
if (mode === 'policy') {
  for (let r = 0; r < Number(runsArg); r++) {
    const t0 = performance.now();
    cost = policyPlan(c, { loadW: samples }).cost;
    times.push(performance.now() - t0);
  }
}
if (mode === 'solve' || mode === 'solve-limits') {
  for (let r = 0; r < Number(runsArg); r++) {
    const t0 = performance.now();
    cost = optimise(c).cost;
    times.push(performance.now() - t0);
  }
}
process.stdout.write(
  `${JSON.stringify({ slots: c.importPrice.length, ms: times.length ? median(times) : 0, firstMs: times[0] ?? 0, maxRssKb: process.resourceUsage().maxRSS, cost })}\n`,
);
