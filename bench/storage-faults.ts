/**
 * The storage invariant harness's long run (test/support/storage-harness.ts; the short run is
 * test/faults/storage-invariants.test.ts): SEEDS seeds of LIVES lives each, every life's fault
 * drawn from its seed (none, a damaged file, a read-only or full disk, the WAL removed while
 * running, the data folder emptied between lives), ended by SIGKILL or SIGTERM. Prints one line of figures per seed and the lives of any
 * seed that found a problem (SEED=n replays it: `SEED=n npx vitest run test/faults/storage-invariants.test.ts`
 * runs the short form of that seed). Needs root (a tmpfs of its own).
 *
 *   node --import tsx bench/storage-faults.ts [seeds=3] [lives=12] [firstSeed=1]
 */
import { runStorageHarness, summary } from '../test/support/storage-harness.js';

const [seeds = 3, lives = 12, first = 1] = process.argv.slice(2).map(Number);
let problems = 0;
for (let seed = first; seed < first + seeds; seed++) {
  const r = await runStorageHarness({ seed, lives });
  console.log(summary(r));
  // what each damage was: a young database keeps its rows in the WAL, which is then the one damaged
  for (const l of r.log) if (l.includes('damage:')) console.log(`  ${l}`);
  if (r.problems.length > 0) {
    problems += r.problems.length;
    console.log(r.problems.join('\n'));
    console.log(r.log.join('\n'));
  }
}
process.exit(problems > 0 ? 1 : 0);
