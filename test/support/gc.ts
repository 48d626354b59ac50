/** Full collections on demand, without starting the test process with --expose-gc. */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
export const gc = runInNewContext('gc') as () => void;

/** Collects after the current job has ended: a WeakRef's target lives at least until then. */
export async function collectWeakRefs(): Promise<void> {
  for (let i = 0; i < 2; i++) {
    await new Promise((r) => setImmediate(r));
    gc();
  }
}
