/**
 * `node --import tsx bench/optimiser-gap.ts [days] [seed] [replanSlots] [startDay] [mean] [plan] [nohold]`: where the
 * optimiser's missing savings are (bench/README.md "Optimiser"): the simulated year of
 * bench/lib/optimiser-year.ts run with forecasts, with perfect foresight, with the load known and
 * with the PV known, each run's cost per month, and the gap (the optimiser's cost over perfect
 * foresight's) per month and per forecast. `mean` plans on the mean load on every day (before
 * planLoad's median on days the grid fills the battery) in a `point` plan; `plan` is `policy` (the
 * daemon's, the default), `ideal` or `point` (bench/lib/optimiser-year.ts Variant); `nohold` plans
 * for a device without hold.
 */
import { simulateYear } from './lib/optimiser-year.js';

const days = Number(process.argv[2] ?? 366);
const seed = Number(process.argv[3] ?? 1);
const replanSlots = Number(process.argv[4] ?? 16);
const startDay = Number(process.argv[5] ?? 0);
const plan = (process.argv[7] ?? 'policy') as 'policy' | 'ideal' | 'point';
const variant = {
  gridDayMedian: process.argv[6] !== 'mean',
  plan,
  noHold: process.argv[8] === 'nohold',
  ...(process.env.SW ? { sampleWeeks: Number(process.env.SW) } : {}),
  ...(process.env.SN ? { sampleNeighbours: Number(process.env.SN) } : {}),
};

const t0 = performance.now();
const y = simulateYear({ year: 2024, days, seed, replanSlots, startDay, knownPv: true, variant });
const secs = (performance.now() - t0) / 1000;
const m = y.monthly;
const f = (x: number) => x.toFixed(2);
const pct = (num: number, den: number) => `${((100 * num) / den).toFixed(0)} %`;
console.log(
  `${days} days from day ${startDay}, seed ${seed}, the ${plan} plan, new every ${replanSlots} quarter hours${variant.gridDayMedian ? '' : ', the mean load every day'}, ${secs.toFixed(0)} s\n`,
);
console.log(
  '| month | self-consumption | perfect | optimiser | gap | share captured | gap, load known | gap, PV known |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
const row = (name: string, sc: number, pf: number, op: number, kl: number, kp: number) =>
  console.log(
    `| ${name} | ${f(sc)} | ${f(pf)} | ${f(op)} | ${f(op - pf)} | ${pct(sc - op, sc - pf)} | ${f(kl - pf)} | ${f(kp - pf)} |`,
  );
for (let i = 0; i < 12; i++) {
  if (m.selfConsumption[i] === 0) continue;
  row(String(i + 1), m.selfConsumption[i]!, m.perfect[i]!, m.optimiser[i]!, m.knownLoad[i]!, m.knownPv[i]!);
}
row('all', y.selfConsumption, y.perfect, y.optimiser, y.knownLoad, y.knownPv);
