/** Full collections on demand, without starting the test process with --expose-gc. */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
export const gc = runInNewContext('gc') as () => void;

/**
 * Collects after the current job has ended: a WeakRef's target lives at least until then. With
 * `gone`, collects again (up to `rounds` times) until it holds: one or two collections did not
 * always free an unreferenced object on Node 22 under a loaded CI run (test/config/weak-validator,
 * 2026-12-03), where nothing but the collector's timing differs. What is never freed still fails.
 */
export async function collectWeakRefs(gone?: () => boolean, rounds = 10): Promise<void> {
  for (let i = 0; i < (gone ? rounds : 2); i++) {
    await new Promise((r) => setImmediate(r));
    gc();
    if (gone && i >= 1 && gone()) return;
  }
}
