/**
 * Fault injection for the watchdog tests, off unless SITEGW_TEST_HOOKS=1 is in the environment
 * (never set by the unit file or the demo):
 * - SIGUSR1 blocks the event loop for SITEGW_TEST_HANG_MS (default 3000) real ms: a hung loop;
 * - SIGUSR2 stops the poll scheduler while the loop stays alive: a stuck main loop.
 */
import type { Logger } from 'pino';

export interface HookTargets {
  scheduler: { stop(): Promise<void> };
  log: Logger;
}

export function installTestHooks(env: NodeJS.ProcessEnv, t: HookTargets): () => void {
  if (env.SITEGW_TEST_HOOKS !== '1') return () => {};
  const hangMs = Number(env.SITEGW_TEST_HANG_MS ?? 3000);
  const hang = () => {
    t.log.warn({ ms: hangMs }, 'test hook: blocking the event loop');
    // Atomics.wait parks the thread without spinning a core
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, hangMs);
  };
  const stall = () => {
    t.log.warn('test hook: stopping the poll scheduler');
    void t.scheduler.stop();
  };
  process.on('SIGUSR1', hang);
  process.on('SIGUSR2', stall);
  return () => {
    process.off('SIGUSR1', hang);
    process.off('SIGUSR2', stall);
  };
}
