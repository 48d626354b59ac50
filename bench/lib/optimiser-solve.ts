/**
 * Child of bench/optimiser.ts, started with the unit's node flags: builds a 48-hour case (192 slots)
 * and, with `solve` as argument, solves it `runs` times; prints the median time and the process's
 * peak RSS as JSON. The peak RSS of a run without `solve` is the baseline the extra memory is
 * measured against (same modules, same case).
 */
import { parseCase } from '../../src/optimiser/case.js';
import { optimise } from '../../src/optimiser/plan.js';
import { dailyCase } from '../../test/optimiser/cases.js';
import { median } from './stats.js';

const [mode = 'solve', runsArg = '15'] = process.argv.slice(2);
const c = parseCase(dailyCase(172, 2024, 2));
const times: number[] = [];
let cost = 0;
if (mode === 'solve') {
  for (let r = 0; r < Number(runsArg); r++) {
    const t0 = performance.now();
    cost = optimise(c).cost;
    times.push(performance.now() - t0);
  }
}
process.stdout.write(
  `${JSON.stringify({ slots: c.importPrice.length, ms: times.length ? median(times) : 0, firstMs: times[0] ?? 0, maxRssKb: process.resourceUsage().maxRSS, cost })}\n`,
);
