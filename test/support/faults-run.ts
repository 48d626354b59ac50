/**
 * The run loop of a fault-invariant harness: a seeded sequence of faults, the invariants checked
 * after each, and on a failure the seed (`SEED=…`, which replays it exactly) with the faults that
 * led there. The harness says what a fault is and what is checked; this says how a run goes.
 */
import { Prng } from './faults-seed.js';

export interface FaultStep {
  /** what was done, in words, for the failure's account */
  name: string;
  run: () => Promise<void>;
}

export interface FaultRun {
  seed: number;
  /** the faults done so far, in order */
  done: string[];
  /** invariant checks passed */
  checks: number;
}

export interface FaultHarness {
  /** the next fault, drawn from the run's PRNG */
  next(rng: Prng, run: FaultRun): FaultStep;
  /** throws when an invariant does not hold; returns how many it checked */
  check(run: FaultRun): Promise<number>;
}

/** Runs `steps` faults of one seed; a failure names the seed and the faults before it. */
export async function runFaults(label: string, seed: number, steps: number, h: FaultHarness): Promise<FaultRun> {
  const rng = new Prng(seed);
  const run: FaultRun = { seed, done: [], checks: 0 };
  try {
    for (let i = 0; i < steps; i++) {
      const step = h.next(rng, run);
      run.done.push(step.name);
      await step.run();
      run.checks += await h.check(run);
    }
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    const replay = `SEED=${seed} (replay: SEED=${seed} npx vitest run <this file>)`;
    console.error(`${label} failed: ${replay}\nfaults: ${run.done.join(' → ')}\n${msg}`);
    throw new Error(`${label}: ${replay} after ${run.done.join(' → ')}: ${msg}`, { cause: err });
  }
  return run;
}
