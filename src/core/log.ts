import type { Writable } from 'node:stream';
import { type DestinationStream, type Logger, pino } from 'pino';

/**
 * Lines queued for a reader that fell behind (journald busy or stuck) beyond this are dropped: a
 * stuck log channel must cost the gateway log lines, never its memory.
 */
export const MAX_QUEUED_LOG_BYTES = 1024 * 1024;

/** How long the exit waits for queued lines to reach a slow reader before they are given up. */
const DRAIN_AT_EXIT_MS = 2_000;

const watched = new WeakSet<Writable>();

/**
 * The log's channel (stdout: journald under systemd), on a policy that never blocks the event
 * loop or the exit: each line goes to node's own stream, which writes what the pipe takes at once
 * and queues the rest for the event loop; past the queue's bound lines are dropped and counted,
 * and once the channel is gone (EPIPE) they are lost.
 *
 * Not pino's default (sonic-boom): its flushSync, which pino runs after every fatal() and at exit,
 * retries a failed write after a blocking 100 ms sleep for as long as it fails, whatever the error.
 * A write waiting on a full pipe when the pipe broke made that EPIPE a loop for ever: the daemon
 * hung with its main thread asleep in Atomics.wait (docs/security.md, "the log channel").
 */
export function logDestination(out: Writable = process.stdout): DestinationStream {
  let dropped = 0;
  // the channel itself failed (journald gone): there is nowhere left to say so. Once per stream:
  // every logger of the process shares stdout
  if (!watched.has(out)) {
    watched.add(out);
    out.on('error', () => undefined);
  }
  return {
    write(line: string) {
      if (out.destroyed || !out.writable) return;
      if (out.writableLength > MAX_QUEUED_LOG_BYTES) {
        dropped++;
        return;
      }
      if (dropped > 0) {
        const note = {
          level: 40,
          time: Date.now(),
          app: 'sitegw',
          dropped,
          msg: 'log lines dropped: the log reader fell behind',
        };
        out.write(`${JSON.stringify(note)}\n`);
        dropped = 0;
      }
      out.write(line);
    },
  };
}

/**
 * Resolves once the lines queued on `out` are written, or after `ms` (a reader that stopped must
 * not hold the exit), or at once when the channel is gone.
 */
export function logDrained(out: Writable = process.stdout, ms = DRAIN_AT_EXIT_MS): Promise<void> {
  if (out.destroyed || out.writableLength === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    out.once('drain', done);
    out.once('close', done);
  });
}

/** One JSON line per event on stdout (journald keeps it); level from SITEGW_LOG_LEVEL. */
export function createLogger(level = process.env.SITEGW_LOG_LEVEL ?? 'info'): Logger {
  return pino(
    {
      level,
      base: { app: 'sitegw' },
      // tokens and secrets must never reach a log line (auth issue); redact the usual carriers now
      redact: ['req.headers.authorization', 'headers.authorization', '*.password', '*.secret', '*.client_secret'],
    },
    logDestination(),
  );
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
