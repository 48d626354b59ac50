/**
 * The storage invariant harness's short run (test/support/storage-harness.ts): one seed, each
 * fault at least once (a damaged file twice), so `npm test` proves the invariants under every
 * kind the card has; bench/storage-faults.ts is the long run over many seeds. SEED=n replays a
 * failing run. Needs root (a tmpfs of its own: CI runs as root); skipped, and says so, without.
 */
import { describe, expect, it } from 'vitest';
import { whyNoMount } from '../support/storage-faults.js';
import { runStorageHarness, summary } from '../support/storage-harness.js';

const SKIP = whyNoMount();
if (SKIP) console.warn(`SKIPPED: the storage invariant harness needs a tmpfs of its own: ${SKIP}`);
const SEED = Number(process.env.SEED ?? 4101);

describe.skipIf(SKIP !== null)('storage invariants under random card faults', () => {
  it(`seed ${SEED}: serves after every start, every client signs in, no undamaged bucket lost or changed (through the fold too), no lifetime lower; an emptied folder starts fresh and says so`, async () => {
    const r = await runStorageHarness({
      seed: SEED,
      lives: 8,
      order: ['none', 'damage', 'readonly', 'emptied', 'full', 'wal', 'damage', 'none'],
    });
    console.log(summary(r));
    if (r.problems.length > 0) console.log(`SEED=${SEED} replays this run:\n${r.log.join('\n')}`);
    expect(r.problems).toEqual([]);
    expect(r.checks.starts).toBe(8);
    expect(r.checks.signIns).toBe(8);
    // the emptied life: the old client refused by name
    expect(r.checks.refused).toBe(1);
    // the daily fold ran under the faults at least once (a planted life on a disk that takes writes)
    expect(r.checks.folded).toBeGreaterThan(0);
    // its read-only life is killed: the copy it left is gone at the next start
    expect(r.checks.copiesSwept).toBeGreaterThan(0);
  }, 270_000);
});
