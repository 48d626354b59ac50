/**
 * The process's last line of defence: an exception or promise rejection that no handler contained.
 *
 * Every socket-facing handler (HTTP routes, the WebSocket upgrade, MQTT messages, Modbus data)
 * contains and logs its own faults, so one reaching the process is a bug, and the feature it hit
 * is in a state nobody knows: a poller that stopped ticking, a bucket that never closes, a
 * stream server that lost its clients, all while /healthz might still say ok. So the policy:
 *
 * 1. log it at fatal level with its stack, through the daemon's own logger, so journald holds
 *    the cause (node's default prints to stderr, and only for the first one);
 * 2. stop the daemon in order, as SIGTERM does (the open buckets and energy counters are saved,
 *    stream clients hear 1001, the uplink's outbox keeps what it has not sent): a crash that
 *    skipped this lost the buckets in progress (issue 14);
 * 3. exit with EX_SOFTWARE (70), never 0, so systemd's Restart=always starts a fresh process and
 *    the journal shows a failure, not a stop.
 *
 * Not "log and carry on": that leaves the unknown state running. Not "exit at once": that loses
 * the open buckets. A second fault while stopping, or a stop that takes longer than `graceMs`,
 * exits at once with the same code: a daemon must not hang half-stopped.
 */
import type { Logger } from 'pino';

export const EXIT_FATAL = 70;

export interface FatalTargets {
  log: Logger;
  /** the daemon's ordered stop, or the one a signal already began (the same promise) */
  stop: () => Promise<void>;
  /** ends the process with this code (the CLI resolves its main promise with it) */
  exit: (code: number) => void;
  /** a stop still running after this long is abandoned (under systemd's TimeoutStopSec of 30 s) */
  graceMs?: number;
}

type Proc = Pick<NodeJS.Process, 'on' | 'off'>;

/** Installs the handlers on `proc`; returns their removal. */
export function exitOnUnhandled(proc: Proc, t: FatalTargets): () => void {
  let fatal = false;
  let logGone = false;
  // the log itself may be what broke (journald gone: EPIPE on stdout or stderr). Then no line is
  // attempted, there is nowhere to write it; a logger that throws is treated the same. The stop
  // and the exit still happen.
  const fatalLine = (fields: Record<string, unknown>, msg: string) => {
    if (logGone) return;
    try {
      t.log.fatal(fields, msg);
    } catch {
      logGone = true;
    }
  };
  const onFault = (kind: 'uncaughtException' | 'unhandledRejection') => (reason: unknown) => {
    const err = reason instanceof Error ? reason : new Error(`non-Error ${kind}: ${String(reason)}`);
    if ((err as NodeJS.ErrnoException).code === 'EPIPE') logGone = true;
    if (fatal) {
      fatalLine({ err, kind }, `another ${kind} while stopping after a fatal fault; exiting now`);
      t.exit(EXIT_FATAL);
      return;
    }
    fatal = true;
    fatalLine(
      { err, kind },
      `${kind}: a fault no handler contained; stopping the gateway in order, then exiting with ${EXIT_FATAL} for systemd to restart it`,
    );
    const timer = setTimeout(() => {
      fatalLine({ graceMs: t.graceMs }, 'the stop after a fatal fault did not finish in time; exiting now');
      t.exit(EXIT_FATAL);
    }, t.graceMs ?? 20_000);
    // not unref'd: with a stop stuck on nothing, the loop would empty and node would exit with 0
    t.stop()
      .catch((stopErr: unknown) => fatalLine({ err: stopErr }, 'stopping after a fatal fault failed'))
      .finally(() => {
        clearTimeout(timer);
        t.exit(EXIT_FATAL);
      });
  };
  const onException = onFault('uncaughtException');
  const onRejection = onFault('unhandledRejection');
  proc.on('uncaughtException', onException);
  proc.on('unhandledRejection', onRejection);
  return () => {
    proc.off('uncaughtException', onException);
    proc.off('unhandledRejection', onRejection);
  };
}
