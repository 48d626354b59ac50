import type { Logger } from 'pino';
import { exitOnUnhandled } from '../ops/fatal.js';
import { EXIT } from './output.js';

export type UntilSignal = (stop: () => Promise<void>, log?: Logger) => Promise<number>;

/**
 * Runs until SIGTERM/SIGINT, then stops cleanly so the open buckets' state is saved. With the
 * daemon's logger, a fault no handler contained stops it the same way and ends the process with
 * EX_SOFTWARE (src/ops/fatal.ts has the policy and why).
 */
export const untilSignal: UntilSignal = (stop, log) =>
  new Promise((resolve) => {
    let stopping: Promise<void> | null = null;
    let fault = false;
    const stopOnce = () => (stopping ??= stop());
    const onSignal = (sig: NodeJS.Signals) => {
      if (stopping) return;
      process.stderr.write(`\n${sig}: stopping\n`);
      stopOnce().then(
        () => resolve(fault ? EXIT.FATAL : EXIT.OK),
        (err: unknown) => {
          process.stderr.write(`error while stopping: ${String(err)}\n`);
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
