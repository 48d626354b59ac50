import type { Logger } from 'pino';
import { exitOnUnhandled } from '../ops/fatal.js';
import { EXIT, type Output } from './output.js';

/**
 * Runs until SIGTERM/SIGINT, then stops cleanly so the open buckets' state is saved. With the
 * daemon's logger, a fault no handler contained stops it the same way and ends the process with
 * EX_SOFTWARE (src/ops/fatal.ts has the policy and why).
 */
export function untilSignal(io: Output, stop: () => Promise<void>, log?: Logger): Promise<number> {
  return new Promise((resolve) => {
    let stopping: Promise<void> | null = null;
    let fault = false;
    const stopOnce = () => (stopping ??= stop());
    const onSignal = (sig: NodeJS.Signals) => {
      if (stopping) return;
      io.err(`\n${sig}: stopping\n`);
      stopOnce().then(
        () => resolve(fault ? EXIT.FATAL : EXIT.OK),
        (err: unknown) => {
          io.err(`error while stopping: ${String(err)}\n`);
          resolve(fault ? EXIT.FATAL : EXIT.FAILURE);
        },
      );
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    // node's default for SIGHUP is to die without saving the open buckets' energy state; a clean
    // stop instead, and under systemd (Restart=always) the start that follows reads the new config
    process.once('SIGHUP', onSignal);
    if (log) {
      exitOnUnhandled(process, {
        log,
        stop: () => {
          fault = true;
          return stopOnce();
        },
        exit: resolve,
      });
    }
  });
}
