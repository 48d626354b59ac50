/**
 * The admission invariants under random faults (test/support/admission-harness.ts): a few seeds
 * of a few seconds each against one daemon, with the unit's node flags and a 256 MB heap, then
 * SIGTERM with the faults' connections still open. A failing seed is printed as SEED=<n> and
 * replays alone with `SEED=<n> npx vitest run test/attack/admission-invariants.test.ts`; the long
 * run is `npm run bench -- admission-invariants` (figures in bench/README.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness, stopWithin } from '../support/admission-harness.js';
import { attackCount } from '../support/attack-scale.js';
import { type ChildDemo, childDemo } from '../support/child-daemon.js';
import { unitRuntime } from '../support/unit-runtime.js';

const SEEDS = process.env.SEED ? [Number(process.env.SEED)] : [1, 2, 3].slice(0, attackCount(3, 1));
const STEPS = 60;
const SPAN_MS = 4000;

describe('admission invariants under random faults', () => {
  let d: ChildDemo;
  let h: Harness;

  beforeAll(async () => {
    const runtime = unitRuntime();
    d = await childDemo({ nodeArgs: [...runtime.args, '--max-old-space-size=256'], env: runtime.env });
    h = new Harness(d, Number(new URL(d.url).port));
    await h.init();
  }, 90_000);
  afterAll(async () => {
    h?.close();
    await d?.cleanup();
  });

  for (const seed of SEEDS)
    it(`seed ${seed}: ${STEPS} faults over ${SPAN_MS / 1000} s from 12 addresses hold every invariant`, {
      timeout: 60_000,
    }, async () => {
      const r = await h.round(seed, STEPS, SPAN_MS);
      if (r.violations.length > 0) console.error(`SEED=${seed} failed: ${r.violations.join(' | ')}`);
      expect(r.violations, `SEED=${seed}`).toEqual([]);
      expect(r.checks).toBeGreaterThan(2);
    });

  it('SIGTERM with faults still holding connections stops the daemon within 10 s', { timeout: 30_000 }, async () => {
    h.holdForStop(4);
    await new Promise((r) => setTimeout(r, 500));
    const ms = await stopWithin(d, 10_000);
    expect(ms, 'ms from SIGTERM to exit (null: still running)').not.toBeNull();
    expect(await d.exit).toMatchObject({ code: 0 });
  });
});
