/**
 * `node --import tsx bench/optimiser.ts [runs] [days] [seed] [replanSlots]`: the optimiser's speed and value.
 *
 * Speed: one 48-hour case (192 slots, the demo site on a June pair of days of the synthetic
 * day-ahead prices) solved `runs` times in a child process started with the unit's node flags
 * (systemd/sitegw.service; BENCH_NODE_ARGS overrides them): median time, and extra memory as the
 * child's peak RSS over the same child that builds the case without solving it. Baseline in the
 * same run: GLPK's glpsol (Debian glpk-utils) on the same case written as an LP file, wall time
 * of the process, median of the same number of runs.
 *
 * The same case with a connection's limits (a 3 kW export cap, 0 W from 11:00 to 15:00 UTC, a 4 kW
 * import limit: test/optimiser/cases.ts limitedDailyCase) is timed against glpsol on its LP file too.
 *
 * The daemon's plan on the load's spread (policy-plan.ts) is timed the same way: it is not the
 * fixed problem's solver, and runs in chunks between which the daemon serves requests.
 *
 * Value: a simulated year of the demo site (bench/lib/optimiser-year.ts): cost with plain
 * self-consumption, with the optimiser on its own forecasts, and with perfect foresight; the share
 * of the achievable savings the optimiser captures.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseCase } from '../src/optimiser/case.js';
import { dailyCase, limitedDailyCase } from '../test/optimiser/cases.js';
import { lpFile } from '../test/optimiser/lp-file.js';
import { unitRuntime } from '../test/support/unit-runtime.js';
import { simulateYear } from './lib/optimiser-year.js';
import { median } from './lib/stats.js';

const run = promisify(execFile);
const runs = Number(process.argv[2] ?? 15);
const days = Number(process.argv[3] ?? 366);
const seed = Number(process.argv[4] ?? 1);
const replanSlots = Number(process.argv[5] ?? 16);
const child = fileURLToPath(new URL('./lib/optimiser-solve.ts', import.meta.url));
const { args } = unitRuntime();

async function solveChild(mode: 'solve' | 'solve-limits' | 'none' | 'policy' | 'samples') {
  const { stdout } = await run(process.execPath, [...args, '--import', 'tsx', child, mode, String(runs)]);
  return JSON.parse(stdout) as { slots: number; ms: number; firstMs: number; maxRssKb: number; cost: number };
}

const solved = await solveChild('solve');
const solvedLimits = await solveChild('solve-limits');
const idle = await solveChild('none');
const policy = await solveChild('policy');
const policyIdle = await solveChild('samples');

const dir = mkdtempSync(join(tmpdir(), 'sitegw-bench-lp-'));
/** glpsol's median wall time on the case's LP file, ms */
function glpsolMs(c: Parameters<typeof parseCase>[0]): number {
  const lp = join(dir, 'case.lp');
  writeFileSync(lp, lpFile(parseCase(c)));
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    execFileSync('glpsol', ['--lp', lp, '-w', join(dir, 'case.sol')], { stdio: 'ignore' });
    times.push(performance.now() - t0);
  }
  return median(times);
}
const glp = glpsolMs(dailyCase(172, 2024, 2));
const glpLimits = glpsolMs(limitedDailyCase(172, 2024, 2));
rmSync(dir, { recursive: true, force: true });

console.log(`node flags: ${args.join(' ') || "(node's defaults)"}\n`);
console.log(`| optimiser, one 48-hour case (${solved.slots} slots) | ms | ratio to glpsol | extra memory (peak RSS) |`);
console.log('|---|---:|---:|---:|');
console.log(`| baseline: glpsol (process start, LP read, simplex) | ${glp.toFixed(1)} | 1.00× | |`);
console.log(
  `| sitegw optimiser, unit's flags (median of ${runs}; first ${solved.firstMs.toFixed(1)}) | ${solved.ms.toFixed(1)} | ${(solved.ms / glp).toFixed(2)}× | ${((solved.maxRssKb - idle.maxRssKb) / 1024).toFixed(1)} MB |`,
);
console.log(
  `| baseline: glpsol, the same case with limits (export cap, a zero-export block, import limit) | ${glpLimits.toFixed(1)} | 1.00× | |`,
);
console.log(
  `| sitegw optimiser, the same case with limits (median of ${runs}) | ${solvedLimits.ms.toFixed(1)} | ${(solvedLimits.ms / glpLimits).toFixed(2)}× | ${((solvedLimits.maxRssKb - idle.maxRssKb) / 1024).toFixed(1)} MB |`,
);
console.log(
  `| the daemon's plan on the load's spread (20 samples a slot), unit's flags (median of ${runs}; first ${policy.firstMs.toFixed(1)}) | ${policy.ms.toFixed(1)} | ${(policy.ms / glp).toFixed(2)}× | ${((policy.maxRssKb - policyIdle.maxRssKb) / 1024).toFixed(1)} MB |`,
);

const t0 = performance.now();
const y = simulateYear({ year: 2024, days, seed, replanSlots });
const secs = (performance.now() - t0) / 1000;
const captured = (y.selfConsumption - y.optimiser) / (y.selfConsumption - y.perfect);
console.log(
  `\nvalue: ${days} simulated days of the demo site (seed ${seed}, a plan every ${replanSlots} quarter hours), ${y.solves} plans in ${secs.toFixed(0)} s; forecast error ` +
    `(mean absolute, day-ahead, relative to the mean): PV ${(100 * y.pvMaeRelative).toFixed(0)} %, load ${(100 * y.loadMaeRelative).toFixed(0)} % over the year; ` +
    `over the last week (what the daemon shows): PV ${(100 * y.lastWeek.pv).toFixed(0)} %, load ${(100 * y.lastWeek.load).toFixed(0)} %\n`,
);
console.log('| operation over the year | cost | saved against self-consumption | share of the achievable |');
console.log('|---|---:|---:|---:|');
console.log(`| baseline: self-consumption | ${y.selfConsumption.toFixed(2)} | | |`);
console.log(
  `| optimiser on its own forecasts | ${y.optimiser.toFixed(2)} | ${(y.selfConsumption - y.optimiser).toFixed(2)} | ${(100 * captured).toFixed(0)} % |`,
);
console.log(
  `| optimiser, PV forecast, load known | ${y.knownLoad.toFixed(2)} | ${(y.selfConsumption - y.knownLoad).toFixed(2)} | ${((100 * (y.selfConsumption - y.knownLoad)) / (y.selfConsumption - y.perfect)).toFixed(0)} % |`,
);
console.log(`| perfect foresight | ${y.perfect.toFixed(2)} | ${(y.selfConsumption - y.perfect).toFixed(2)} | 100 % |`);
