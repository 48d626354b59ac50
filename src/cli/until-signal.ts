import type { Logger } from 'pino';
import { exitOnUnhandled } from '../ops/fatal.js';
import { EXIT, type Output } from './output.js';

/**
 * SIGTERM and SIGINT stop a long-running command cleanly, so the open buckets' state is saved;
 * node's default for SIGHUP is to die without saving it, so it stops the same way (under systemd,
 * Restart=always then reads the new config).
 */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

export interface SignalWatch {
  /** aborted by the first stop signal, so a slow start (the demo's history pre-fill) can cut itself short */
  readonly stopping: AbortSignal;
  /**
   * Runs until a stop signal (one that came before this call included), then `stop`. With the
   * daemon's logger, a fault no handler contained stops it the same way and ends the process
   * with EX_SOFTWARE (src/ops/fatal.ts has the policy and why).
   */
  until(stop: () => Promise<void>, log?: Logger): Promise<number>;
}

/**
 * Takes the stop signals from now on. A command arms this before it starts anything or prints
 * that it is ready: a signal sent by whoever read that line (a test, a supervisor) could otherwise
 * arrive before `until` is listening and kill the process with node's default, unsaved. One that
 * comes while the command is still starting waits for the start, then stops it. The listeners go
 * with the first signal, so a second Ctrl-C during a slow stop ends the process at once.
 */
type Proc = Pick<NodeJS.Process, 'on' | 'off'>;

export function watchSignals(io: Output, proc: Proc = process): SignalWatch {
  let pending: NodeJS.Signals | null = null;
  let onStop: ((sig: NodeJS.Signals) => void) | null = null;
  const stopping = new AbortController();
  const handler = (sig: NodeJS.Signals) => {
    for (const s of STOP_SIGNALS) proc.off(s, handler);
    stopping.abort(sig);
    if (onStop) onStop(sig);
    else pending = sig;
  };
  for (const s of STOP_SIGNALS) proc.on(s, handler);
  return {
    stopping: stopping.signal,
    until: (stop, log) =>
      new Promise((resolve) => {
        let stopping: Promise<void> | null = null;
        let fault = false;
        const stopOnce = () => {
          stopping ??= stop();
          return stopping;
        };
        onStop = (sig) => {
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
        if (pending) onStop(pending);
      }),
  };
}
